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
BYPASS_WITHOUT_LLM_ANSWER = (
    "Bypass mode sends the question straight to the LLM, without searching the documents, "
    "and no LLM is configured: there is nothing to answer it. Configure an LLM, or ask in "
    "another mode (naive, local, global, hybrid or mix) for an extractive answer quoted from "
    "the documents."
)


def empty_workspace_answer(workspace: str) -> str:
    return (
        f"The workspace '{workspace}' holds no indexed documents, so there is nothing to answer "
        "from. Ingest documents into it and wait until they are indexed, or check the "
        "workspace's name."
    )


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
