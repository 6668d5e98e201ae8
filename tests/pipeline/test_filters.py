"""Filters never widen: on both search stores and in every mode, a query sees only what
its filter allows, and a filter that allows nothing returns nothing (never "everything").

The corpus shares entities across documents (Halvorsen Aquatics, Tomasz Brejcha, Skua 3),
so a leak through the graph paths (an entity found by its text, a relation around it, a
description merged from other documents) would show up as a foreign doc id.
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from google.protobuf.timestamp_pb2 import Timestamp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragstream.common.config import LLMConfig, QueryDefaults
from ragstream.common.events import DocumentChange
from ragstream.common.models import SearchFilter
from ragstream.common.providers.llm import OpenAIChat
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import Backends
from ragstream.common.timing import StageTimer
from ragstream.query.engine import QueryEngine
from ragstream.query.main import build_engine
from ragstream.query.stages.answer import NO_CONTEXT_ANSWER
from ragstream.query.stages.filter import NOTHING_ALLOWED_NOTE
from ragstream.query.transport.convert import query_options, to_filter
from ragstream.query.types import Mode, QueryInput, Retrieval
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import common_pb2, query_pb2
from tests.support.elasticsearch import ElasticsearchNode, unique_index
from tests.support.pipeline import embedded_settings, running_pipeline

WS = "filters"
DOCS: dict[str, tuple[str, dict[str, str], float]] = {
    "alpha.md": (
        "Halvorsen Aquatics builds the Tern S3 sensor. Mira Okafor leads the Tern S3 project "
        "at Halvorsen Aquatics.",
        {"team": "red"},
        100.0,
    ),
    "beta.md": (
        "Halvorsen Aquatics hired Tomasz Brejcha in Bergen. Tomasz Brejcha tests the Skua 3 "
        "drone for Halvorsen Aquatics.",
        {"team": "blue"},
        200.0,
    ),
    "gamma.md": (
        "Mira Okafor presented the Skua 3 drone in Bergen with Tomasz Brejcha.",
        {"team": "red", "tier": "gold"},
        300.0,
    ),
    "delta.md": (
        "Scrooge is a miser in London. Scrooge employs Bob Cratchit at the counting house.",
        {"team": "green"},
        400.0,
    ),
}
QUESTIONS = (
    "Who is Scrooge?",
    "Who tests the Skua 3 drone?",
    "What does Halvorsen Aquatics build?",
)
RETRIEVING = [Mode.LOCAL, Mode.GLOBAL, Mode.HYBRID, Mode.MIX, Mode.NAIVE]


def stamp(seconds: float) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(datetime.datetime.fromtimestamp(seconds, datetime.UTC))
    return ts


NOTHING_MATCHES = {
    "metadata": common_pb2.SearchFilter(metadata={"team": "nobody"}),
    "doc_ids": common_pb2.SearchFilter(doc_ids=["no-such-doc"]),
    "time": common_pb2.SearchFilter(time_to=stamp(50.0)),
}


def allowed_by(search_filter: SearchFilter) -> set[str]:
    """The documents a filter allows, computed from the corpus itself."""
    allowed = set()
    for doc_id, (_, metadata, timestamp) in DOCS.items():
        if search_filter.doc_ids is not None and doc_id not in search_filter.doc_ids:
            continue
        if any(metadata.get(k) != v for k, v in search_filter.metadata.items()):
            continue
        if search_filter.time_from is not None and timestamp < search_filter.time_from:
            continue
        if search_filter.time_to is not None and timestamp >= search_filter.time_to:
            continue
        allowed.add(doc_id)
    return allowed


def question(text: str, mode: Mode, search_filter: SearchFilter) -> QueryInput:
    options = replace(query_options(query_pb2.QueryParams(), QueryDefaults()), mode=mode)
    return QueryInput(WS, text, options, search_filter)


def seen_docs(r: Retrieval) -> set[str]:
    docs = {c.doc_id for c in r.chunks} | {ref.doc_id for ref in r.references}
    for entity in r.entities:
        docs.update(entity.doc_ids)
    for relation in r.relations:
        docs.update(relation.doc_ids)
    return docs


def store_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        return embedded_settings(tmp_path)
    if request.param == "sqlite-approximate":  # every collection on its approximate index
        return embedded_settings(tmp_path, storage={"approximate_from": 1})
    node: ElasticsearchNode = request.getfixturevalue("elasticsearch_node")
    prefix = unique_index("filters")
    return embedded_settings(
        tmp_path,
        storage={"search": "elasticsearch"},
        elasticsearch={"hosts": [node.url], "index_prefix": prefix},
    )


@pytest_asyncio.fixture(
    scope="module", loop_scope="module", params=["sqlite", "sqlite-approximate", "elasticsearch"]
)
async def indexed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Backends]:
    """The corpus indexed once per store; the stages keep running while the tests query."""
    async with running_pipeline(store_settings(request, tmp_path_factory.mktemp("f"))) as p:
        await p.publish(
            [
                DocumentChange(WS, doc_id, 1, False, text, doc_id, metadata, timestamp)
                for doc_id, (text, metadata, timestamp) in DOCS.items()
            ]
        )
        await p.idle()
        await p.refresh()
        yield p.backends


@pytest.fixture
def engine(indexed: Backends) -> QueryEngine:
    return build_engine(embedded_settings(Path("unused")), indexed)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("kind", sorted(NOTHING_MATCHES))
@pytest.mark.parametrize("mode", RETRIEVING)
async def test_a_filter_matching_nothing_returns_nothing(
    engine: QueryEngine, mode: Mode, kind: str
) -> None:
    timer = StageTimer()
    q = question("Who is Scrooge?", mode, to_filter(NOTHING_MATCHES[kind]))
    retrieval = await engine.retrieve(q, timer)
    assert (retrieval.chunks, retrieval.entities, retrieval.relations) == ([], [], [])
    assert retrieval.references == []
    assert NOTHING_ALLOWED_NOTE in retrieval.notes
    assert await engine.answer(q, retrieval, timer) == NO_CONTEXT_ANSWER


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("mode", [Mode.LOCAL, Mode.HYBRID, Mode.MIX, Mode.NAIVE])
async def test_the_same_question_unfiltered_does_find_the_document(
    engine: QueryEngine, mode: Mode
) -> None:
    """The control: without the filter, the question above is answered from delta.md."""
    retrieval = await engine.retrieve(
        question("Who is Scrooge?", mode, SearchFilter()), StageTimer()
    )
    assert "delta.md" in seen_docs(retrieval)


FILTERS = st.builds(
    SearchFilter,
    doc_ids=st.none() | st.frozensets(st.sampled_from([*DOCS, "ghost.md"]), max_size=3),
    metadata=st.dictionaries(
        st.sampled_from(["team", "tier"]), st.sampled_from(["red", "blue", "gold", "x"]), max_size=2
    ),
    time_from=st.none() | st.sampled_from([0.0, 150.0, 300.0]),
    time_to=st.none() | st.sampled_from([100.0, 250.0, 1000.0]),
)


@pytest.mark.asyncio(loop_scope="module")
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(search_filter=FILTERS, mode=st.sampled_from(RETRIEVING), text=st.sampled_from(QUESTIONS))
async def test_results_are_always_within_what_the_filter_allows(
    engine: QueryEngine, search_filter: SearchFilter, mode: Mode, text: str
) -> None:
    retrieval = await engine.retrieve(question(text, mode, search_filter), StageTimer())
    allowed = allowed_by(search_filter)
    assert seen_docs(retrieval) <= allowed, (search_filter, mode)
    if not allowed:
        assert not (retrieval.chunks or retrieval.entities or retrieval.relations)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_llm_is_not_asked_when_the_filter_allows_nothing(indexed: Backends) -> None:
    async with OpenAITestServer() as server:
        chat = OpenAIChat(
            LLMConfig(provider="openai", model="m", base_url=server.base_url, api_key="sk-test")
        )
        try:
            engine = QueryEngine(
                indexed.stores, indexed.providers.embeddings.view(Priority.QUERY), chat
            )
            q = question("Who is Scrooge?", Mode.MIX, to_filter(NOTHING_MATCHES["metadata"]))
            timer = StageTimer()
            answer = await engine.answer(q, await engine.retrieve(q, timer), timer)
        finally:
            await chat.close()
        assert answer == NO_CONTEXT_ANSWER
        assert server.log.bodies.get("chat", []) == []
