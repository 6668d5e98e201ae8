"""The extractive answer's choice of sentences: how well each sentence of the context
matches the question, by BM25's term weights, and how the retrieval ranked its chunk.

Counting the query terms a sentence shares favours sentences full of words every document
uses (a company's name in each of its press releases), so the first sentence quoted was
often about something else. Here a sentence's match is the share of the question it holds,
each question term weighted by its BM25 idf over the context's sentences (Lucene's form,
positive even for a term in most sentences): a rare term ("Okafor", "sensor") counts far more
than a common one. Full BM25 (term frequency, length damping) was measured too: it puts
short sentences that repeat one common term first ("Team lead: Rafael Quintero."), and on
the demo's questions its first sentence came from an expected document less often.

The sentences within `GOOD_MATCH` of the best match are good matches; they are quoted in
the order the retrieval ranked their chunks (which saw the whole passage, by BM25 and
vector, and the reranker when one is configured), the earlier sentence of a chunk first;
the other sentences that share a term follow by match. With a reranker configured (and
rerank on), the reranker scores the best `RERANK_CANDIDATES` of those sentences against the
question and its order decides (`rerank_quotes`); when it fails, the order above stands.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragstream.common.providers import ProviderError
from ragstream.common.providers.rerank import Reranker
from ragstream.common.text.analyzer import analyze
from ragstream.query.types import ContextChunk

RERANK_CANDIDATES = 20
"""Sentences offered to the reranker: the best by the rule above."""
GOOD_MATCH = 0.5
"""A good match holds at least this share of the best match's weight."""
REFERRING_PRONOUNS = frozenset({"It", "Its", "He", "His", "She", "Her", "They", "Their", "This"})
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；])\s+|(?<=[。！？；])|\n{2,}")


@dataclass(frozen=True, slots=True)
class Quote:
    """A sentence to quote, with the reference of the chunk it comes from."""

    text: str
    reference_id: str
    match: float
    """The idf weight of the question terms it holds."""


@dataclass(frozen=True, slots=True)
class _Sentence:
    rank: int
    """Its chunk's rank in the context."""
    index: int
    """Its position in the chunk."""
    quoted: str
    terms: frozenset[str]
    reference_id: str


def split_sentences(text: str) -> list[str]:
    """Sentences with white space folded; markdown headings and emphasis marks dropped."""
    sentences = []
    for raw in _SENTENCE_END.split(text):
        sentence = " ".join(raw.replace("**", "").split()).lstrip("#").strip()
        if sentence and not raw.lstrip().startswith("#"):
            sentences.append(sentence)
    return sentences


def _sentences(chunks: Sequence[ContextChunk]) -> list[_Sentence]:
    """Every sentence of the chunks. One opening with a pronoun ("It has supplied O-rings
    ...") is quoted with the sentence before it, which names what the pronoun stands for."""
    found = []
    for rank, chunk in enumerate(chunks):
        sentences = split_sentences(chunk.content)
        for index, sentence in enumerate(sentences):
            quoted = sentence
            if index and sentence.split(" ", 1)[0] in REFERRING_PRONOUNS:
                quoted = f"{sentences[index - 1]} {sentence}"
            terms = frozenset(analyze(sentence))
            found.append(_Sentence(rank, index, quoted, terms, chunk.reference_id))
    return found


def best_sentences(query: str, chunks: Sequence[ContextChunk], limit: int) -> list[Quote]:
    """The `limit` sentences to quote, best first (module doc); only sentences that share a
    term with the question."""
    wanted = set(analyze(query))
    sentences = _sentences(chunks)
    count = len(sentences)
    idf = {}
    for term in wanted:
        df = sum(term in s.terms for s in sentences)
        if df:
            idf[term] = math.log(1 + (count - df + 0.5) / (df + 0.5))
    matches = [sum(w for term, w in idf.items() if term in s.terms) for s in sentences]
    best = max(matches, default=0.0)
    ranked = sorted(
        (
            (match < GOOD_MATCH * best, s.rank if match >= GOOD_MATCH * best else -match),
            s.rank,
            s.index,
            Quote(s.quoted, s.reference_id, match),
        )
        for s, match in zip(sentences, matches, strict=True)
        if match > 0
    )
    return [quote for *_, quote in ranked[:limit]]


async def rerank_quotes(
    reranker: Reranker, query: str, quotes: Sequence[Quote], limit: int
) -> list[Quote]:
    """The `limit` quotes the reranker scores highest, best first (ties keep their order);
    the first `limit` as they came when the reranker fails, since an answer from the match
    rule is better than none."""
    if not quotes:
        return []
    try:
        scores = await reranker.rerank(query, [quote.text for quote in quotes])
    except ProviderError:
        return list(quotes[:limit])
    order = sorted(range(len(quotes)), key=lambda i: -scores[i])
    return [quotes[i] for i in order[:limit]]
