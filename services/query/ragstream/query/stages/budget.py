"""Token budget: keep the best context that fits, the system prompt counted.

Entities and relations each have their own budget; chunks get what is left of the total
after the prompt, the entities and the relations (LightRAG's max_entity_tokens,
max_relation_tokens and max_total_tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ragstream.query.types import ContextChunk, ContextEntity, ContextRelation

T = TypeVar("T")


def entity_line(e: ContextEntity) -> str:
    return f"- {e.name} ({e.type or 'unknown'}): {e.description}"


def relation_line(r: ContextRelation) -> str:
    return f"- {r.source} <-> {r.target} [{r.keywords}]: {r.description}"


def fit(items: Sequence[T], cost: Callable[[T], int], available: int) -> list[T]:
    """The longest prefix of `items` (best first) whose total cost is within `available`."""
    kept: list[T] = []
    used = 0
    for item in items:
        used += cost(item)
        if used > available:
            break
        kept.append(item)
    return kept


def fit_chunks(chunks: Sequence[ContextChunk], available_tokens: int) -> list[ContextChunk]:
    return fit(chunks, lambda c: c.tokens, available_tokens)
