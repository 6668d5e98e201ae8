"""Token budget: keep the best context that fits, the system prompt counted."""

from __future__ import annotations

from collections.abc import Sequence

from ragstream.query.types import ContextChunk


def fit_chunks(chunks: Sequence[ContextChunk], available_tokens: int) -> list[ContextChunk]:
    """The longest prefix of `chunks` (best first) whose tokens fit in `available_tokens`."""
    kept: list[ContextChunk] = []
    used = 0
    for chunk in chunks:
        if used + chunk.tokens > available_tokens:
            break
        kept.append(chunk)
        used += chunk.tokens
    return kept
