"""Answer stage: the extractive answer offline (the LLM prompt is in query/prompt.py).

The extractive answerer is the offline default (no LLM configured): it quotes the context
sentences that share the most query terms, each with its reference, and says that it is
extractive. It never pretends to be a model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragstream.common.text.analyzer import analyze
from ragstream.query.types import (
    ContextChunk,
)

EXTRACTIVE_HEADER = "Extractive answer (no LLM configured), quoted from the best-matching sources:"
NO_CONTEXT_ANSWER = "I could not find anything in the indexed documents about this question."
BYPASS_WITHOUT_LLM_ANSWER = (
    "Bypass mode sends the question straight to the LLM, without searching the documents, "
    "and no LLM is configured: there is nothing to answer it. Configure an LLM, or ask in "
    "another mode (naive, local, global, hybrid or mix) for an extractive answer quoted from "
    "the documents."
)
REFERRING_PRONOUNS = frozenset({"It", "Its", "He", "His", "She", "Her", "They", "Their", "This"})
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；])\s+|(?<=[。！？；])|\n{2,}")


def empty_workspace_answer(workspace: str) -> str:
    return (
        f"The workspace '{workspace}' holds no indexed documents, so there is nothing to answer "
        "from. Ingest documents into it and wait until they are indexed, or check the "
        "workspace's name."
    )


def split_sentences(text: str) -> list[str]:
    """Sentences with white space folded; markdown headings and emphasis marks dropped."""
    sentences = []
    for raw in _SENTENCE_END.split(text):
        sentence = " ".join(raw.replace("**", "").split()).lstrip("#").strip()
        if sentence and not raw.lstrip().startswith("#"):
            sentences.append(sentence)
    return sentences


def extractive_answer(query: str, chunks: Sequence[ContextChunk], max_sentences: int = 3) -> str:
    """The context sentences sharing the most distinct query terms, best first, cited.

    A sentence that opens with a pronoun ("It has supplied O-rings ...") is quoted with the
    sentence before it, which names what the pronoun stands for.
    """
    wanted = set(analyze(query))
    scored: list[tuple[float, int, int, str, str]] = []
    for rank, chunk in enumerate(chunks):
        sentences = split_sentences(chunk.content)
        for index, sentence in enumerate(sentences):
            overlap = len(wanted.intersection(analyze(sentence)))
            if overlap:
                quoted = sentence
                if index and sentence.split(" ", 1)[0] in REFERRING_PRONOUNS:
                    quoted = f"{sentences[index - 1]} {sentence}"
                # Rank breaks ties: a sentence from a better chunk wins, then an earlier one.
                scored.append((overlap, -rank, -index, quoted, chunk.reference_id))
    if not scored:
        return NO_CONTEXT_ANSWER
    scored.sort(reverse=True)
    lines = [f"- {sentence} [{ref}]" for *_, sentence, ref in scored[:max_sentences]]
    return "\n".join([EXTRACTIVE_HEADER, *lines])
