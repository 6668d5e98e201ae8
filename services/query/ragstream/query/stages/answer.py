"""Answer stage: the extractive answer offline (the LLM prompt is in query/prompt.py).

The extractive answerer is the offline default (no LLM configured): it quotes the context
sentences that match the question best (BM25 over the context's sentences, query/sentences.py),
each citing its passage, and says that it is extractive. It never pretends to be a model.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragstream.query.sentences import Quote, best_sentences
from ragstream.query.types import ContextChunk

EXTRACTIVE_HEADER = "Extractive answer (no LLM configured), quoted from the best-matching sources:"
NO_CONTEXT_ANSWER = "I could not find anything in the indexed documents about this question."


def extractive_answer(query: str, chunks: Sequence[ContextChunk], max_sentences: int = 3) -> str:
    """The context sentences that match the query best (BM25 over sentences,
    query/sentences.py), best first, each citing its passage."""
    return quoted_answer(best_sentences(query, chunks, max_sentences))


def quoted_answer(quotes: Sequence[Quote]) -> str:
    """The extractive answer of these quotes, each citing its passage."""
    if not quotes:
        return NO_CONTEXT_ANSWER
    lines = [f"- {quote.text} [{quote.reference_id}]" for quote in quotes]
    return "\n".join([EXTRACTIVE_HEADER, *lines])
