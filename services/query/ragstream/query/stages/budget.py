"""Token budget: keep the best context that fits, the system prompt counted.

Entities and relations each have their own budget; chunks get what is left of the total
after the prompt, the entities and the relations (LightRAG's max_entity_tokens,
max_relation_tokens and max_total_tokens).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TypeVar

from opentelemetry.trace import Span

from ragstream.common.telemetry import annotate
from ragstream.common.text.tokens import count_tokens
from ragstream.query.citations import cite
from ragstream.query.prompt import (
    build_messages,
    conversation,
    entity_line,
    reference_line,
    relation_line,
    render_prompt,
    system_message,
)
from ragstream.query.types import ContextChunk, QueryState, Retrieval

T = TypeVar("T")

LINE_COUNTS = 8192
"""Entity and relation lines whose token counts are kept: the same entities and relations
come back query after query, and tokenizing their lines was over half of this stage's time."""


@functools.lru_cache(maxsize=LINE_COUNTS)
def line_tokens(line: str) -> int:
    return count_tokens(line)


SLACK = 64
"""Tokens by which the bound of `prompt_bound` must clear the limit for it to decide."""


def prompt_bound(state: QueryState, result: Retrieval) -> int:
    """At least the tokens of the prompt without its chunks: the system message with no
    context (counted once per response type and user prompt), each reference, entity and
    relation line's (cached) count and one for its line break, and each other message.

    Counting the whole prompt was most of this stage's time (its entity and relation lines
    run to thousands of tokens), and it matters only when the chunks come near the limit.
    The pre-tokenizer splits the joined lines at their line breaks, so the joined count is
    the sum of the lines' counts, or less where a line's last mark takes the break in; each
    of the system prompt's placeholders is a line of its own.
    """
    o = state.q.options
    frame = _frame_tokens(o.response_type, o.user_prompt)
    rest = sum(count_tokens(render_prompt([m])) + 1 for m in conversation(state.q.query, o))
    lines = sum(line_tokens(reference_line(r)) + 1 for r in result.references)
    lines += sum(line_tokens(entity_line(e)) + 1 for e in result.entities)
    return frame + rest + lines + sum(line_tokens(relation_line(r)) + 1 for r in result.relations)


@functools.lru_cache(maxsize=64)
def _frame_tokens(response_type: str, user_prompt: str) -> int:
    """Tokens of the rendered system message without context or references."""
    return count_tokens(render_prompt([system_message(Retrieval(), response_type, user_prompt)]))


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


class BudgetStage:
    """The chunks cut to chunk_top_k and cited, then everything fitted to the budgets."""

    name = "budget"

    def applies(self, state: QueryState) -> bool:
        return True

    async def run(self, state: QueryState, current: Span) -> None:
        result = state.result
        result.chunks, result.references = cite(result.chunks[: state.q.options.chunk_top_k])
        fit_budget(state, result)
        annotate(
            current,
            entities=len(result.entities),
            relations=len(result.relations),
            chunks=len(result.chunks),
            references=len(result.references),
        )


def fit_budget(state: QueryState, result: Retrieval) -> None:
    o = state.q.options
    result.entities = fit(
        result.entities, lambda e: line_tokens(entity_line(e)), o.max_entity_tokens
    )
    result.relations = fit(
        result.relations, lambda r: line_tokens(relation_line(r)), o.max_relation_tokens
    )
    chunks, result.chunks = result.chunks, []
    cost = sum(chunk.tokens for chunk in chunks)
    if prompt_bound(state, result) + cost + SLACK > o.max_total_tokens:
        # Near the limit: the exact count decides which chunks fit.
        overhead = count_tokens(render_prompt(build_messages(state.q.query, result, o)))
        chunks = fit_chunks(chunks, max(0, o.max_total_tokens - overhead))
    result.chunks = chunks
    result.references = [
        r for r in result.references if any(c.reference_id == r.reference_id for c in result.chunks)
    ]
