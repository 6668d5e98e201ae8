"""The token budget: the cheap bound on the prompt never undercounts, so the chunks kept are
those the exact count keeps."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ragstream.common.config import QueryDefaults
from ragstream.common.providers.llm import ChatMessage
from ragstream.common.text.tokens import count_tokens
from ragstream.query.prompt import build_messages, render_prompt
from ragstream.query.stages.budget import fit_budget, fit_chunks, prompt_bound
from ragstream.query.transport.convert import query_options
from ragstream.query.types import (
    ContextChunk,
    ContextEntity,
    ContextRelation,
    QueryInput,
    QueryState,
    Reference,
    Retrieval,
)
from ragstream.v1 import query_pb2

# Letters, digits, CJK, punctuation and whitespace, line breaks included: the characters
# whose neighbours decide where the tokenizer splits.
TEXT = st.text(
    alphabet=st.sampled_from([*"abcXYZ019 .,;:!?)(-'\"\n\t", "中", "文", "。", "é", "🙂"]),
    max_size=60,
)
ENTITIES = st.lists(st.tuples(TEXT, TEXT, TEXT), max_size=12)
RELATIONS = st.lists(st.tuples(TEXT, TEXT, TEXT, TEXT), max_size=12)


def state_of(query: str, total: int) -> QueryState:
    options = replace(
        query_options(query_pb2.QueryParams(), QueryDefaults()), max_total_tokens=total
    )
    return QueryState(QueryInput("ws", query, options), Retrieval())


def retrieval(
    entities: list[tuple[str, str, str]], relations: list[tuple[str, str, str, str]]
) -> Retrieval:
    return Retrieval(
        entities=[
            ContextEntity(f"e{i}", name, kind, text, 1.0, ("d",), ())
            for i, (name, kind, text) in enumerate(entities)
        ],
        relations=[
            ContextRelation(f"r{i}", a, b, keywords, text, 1.0, 1.0, ("d",), ())
            for i, (a, b, keywords, text) in enumerate(relations)
        ],
        references=[Reference("1", "d", "d.md")],
    )


def exact_overhead(state: QueryState, result: Retrieval) -> int:
    return count_tokens(render_prompt(build_messages(state.q.query, result, state.q.options)))


@settings(max_examples=300, deadline=None)
@given(TEXT, ENTITIES, RELATIONS)
def test_the_bound_never_undercounts_the_prompt(
    query: str, entities: list[tuple[str, str, str]], relations: list[tuple[str, str, str, str]]
) -> None:
    state = state_of(query, 30000)
    result = retrieval(entities, relations)
    assert prompt_bound(state, result) >= exact_overhead(state, result)


@settings(max_examples=300, deadline=None)
@given(
    TEXT,
    st.lists(st.tuples(TEXT, TEXT), max_size=8),
    TEXT,
    TEXT,
    st.lists(st.tuples(st.booleans(), TEXT), max_size=3),
)
def test_the_bound_counts_references_instructions_and_history(
    query: str,
    references: list[tuple[str, str]],
    response_type: str,
    user_prompt: str,
    history: list[tuple[bool, str]],
) -> None:
    state = state_of(query, 30000)
    options = replace(
        state.q.options,
        response_type=response_type,
        user_prompt=user_prompt,
        history=tuple(ChatMessage("user" if user else "assistant", text) for user, text in history),
    )
    state = QueryState(QueryInput("ws", query, options), Retrieval())
    result = replace(
        retrieval([("A", "person", "x")], []),
        references=[
            Reference(str(i + 1), f"d{i}", path, title)
            for i, (path, title) in enumerate(references)
        ],
    )
    assert prompt_bound(state, result) >= exact_overhead(state, result)


@settings(max_examples=200, deadline=None)
@given(
    ENTITIES,
    RELATIONS,
    st.lists(st.integers(min_value=1, max_value=400), max_size=20),
    st.integers(min_value=0, max_value=4000),
)
def test_the_chunks_kept_are_those_the_exact_count_keeps(
    entities: list[tuple[str, str, str]],
    relations: list[tuple[str, str, str, str]],
    sizes: list[int],
    total: int,
) -> None:
    state = state_of("what happened?", total)
    result = retrieval(entities, relations)
    chunks = [ContextChunk(f"c{i}", "d", "d.md", "x", 1.0, n, "1") for i, n in enumerate(sizes)]
    bare = replace(result, chunks=[])
    # The budgets of entities and relations are far above these lines: only chunks are cut.
    expected = fit_chunks(chunks, max(0, total - exact_overhead(state, bare)))
    result.chunks = chunks
    fit_budget(state, result)
    assert [c.chunk_id for c in result.chunks] == [c.chunk_id for c in expected]
