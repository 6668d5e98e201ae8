"""Dual-level retrieval on the embedded stores: modes, filters and budgets, in-process."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ragstream.cli import demo_data
from ragstream.common.config import QueryDefaults
from ragstream.common.errors import BackendUnavailableError
from ragstream.common.events import DocumentChange
from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord
from ragstream.common.providers.scheduler import Priority
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.timing import StageTimer
from ragstream.query.engine import QueryEngine
from ragstream.query.main import build_engine
from ragstream.query.transport.convert import query_options
from ragstream.query.types import Mode, QueryInput, Retrieval
from ragstream.v1 import query_pb2
from tests.support.embedders import HeldEmbedder
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline

WS = "modes"
SHARED_A = "Mira Okafor leads the Tern sensor team. The Tern S3 recall cost EUR 4 million."
SHARED_B = "Mira Okafor presented the Skua 3 drone in Bergen with Tomasz Brejcha."


def question(
    text: str, mode: Mode, doc_ids: frozenset[str] | None = None, chunk_top_k: int = 0
) -> QueryInput:
    params = query_pb2.QueryParams(chunk_top_k=chunk_top_k)
    options = replace(query_options(params, QueryDefaults()), mode=mode)
    return QueryInput(WS, text, options, SearchFilter(doc_ids=doc_ids))


def everything(r: Retrieval) -> str:
    parts = [e.description for e in r.entities] + [x.description for x in r.relations]
    parts += [c.content for c in r.chunks]
    return "\n".join(parts)


async def index(pipeline: Pipeline, docs: dict[str, str]) -> QueryEngine:
    await pipeline.publish(
        [DocumentChange(WS, d, 1, False, text, d, {}, 1.0) for d, text in docs.items()]
    )
    await pipeline.idle()
    return build_engine(pipeline.settings, pipeline.backends)


@pytest.mark.parametrize("mode", [Mode.LOCAL, Mode.GLOBAL, Mode.HYBRID, Mode.MIX, Mode.NAIVE])
async def test_a_filtered_query_never_leaks_other_documents(tmp_path: Path, mode: Mode) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        engine = await index(pipeline, {"a.md": SHARED_A, "b.md": SHARED_B})
        unfiltered = await engine.retrieve(
            question("What does Mira Okafor do?", mode), StageTimer()
        )
        filtered = await engine.retrieve(
            question("What does Mira Okafor do?", mode, frozenset({"b.md"})), StageTimer()
        )
    assert "Tern" in everything(unfiltered)  # the shared entity does carry doc a's text
    assert "Tern" not in everything(filtered) and "recall" not in everything(filtered)
    assert "Skua" in everything(filtered)
    assert all(c.doc_id == "b.md" for c in filtered.chunks)
    assert all(set(e.doc_ids) == {"b.md"} for e in filtered.entities)


async def test_demo_questions_find_what_a_person_expects(tmp_path: Path) -> None:
    corpus = demo_data.CORPUS
    questions = json.loads(demo_data.QUESTIONS.read_text(encoding="utf-8"))
    docs = {f.name: f.read_text(encoding="utf-8") for f in sorted(corpus.iterdir())}
    # The hashed embedder keeps this fast; it is not semantic, so BM25 and the graph carry
    # the retrieval here (the semantic default is measured by `ragstream eval`).
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        engine = await index(pipeline, docs)
        results = {}
        for item in questions:
            mode = Mode(item["mode"])
            results[item["question"]] = (
                item,
                await engine.retrieve(
                    question(item["question"], mode, chunk_top_k=8), StageTimer()
                ),
            )
    found_docs = 0
    wanted_docs = 0
    for item, retrieval in results.values():
        got = {c.doc_id for c in retrieval.chunks}
        wanted = set(item["expected_doc_ids"])
        wanted_docs += len(wanted)
        found_docs += len(wanted & got)
        assert wanted & got, (item["question"], got)
        if item["mode"] != "naive":
            names = {e.name.casefold() for e in retrieval.entities}
            expected = {n.casefold() for n in item["expected_entities"]}
            assert expected & names, (item["question"], sorted(names)[:20])
            assert retrieval.relations, item["question"]
    print(f"expected documents found: {found_docs}/{wanted_docs}")
    assert found_docs / wanted_docs >= 0.45


async def test_entities_named_by_the_keywords_come_first_within_the_filter(
    tmp_path: Path,
) -> None:
    def named(doc_ids: frozenset[str] | None = None) -> QueryInput:
        q = question("Who works on sensors and drones?", Mode.LOCAL, doc_ids)
        keywords = ("Tomasz Brejcha", "tern s3", "Nobody Known")
        return replace(q, options=replace(q.options, ll_keywords=keywords))

    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        engine = await index(pipeline, {"a.md": SHARED_A, "b.md": SHARED_B})
        everywhere = await engine.retrieve(named(), StageTimer())
        only_b = await engine.retrieve(named(frozenset({"b.md"})), StageTimer())
    # Exact names (any case or spacing) first, in keyword order; unknown names are skipped.
    assert [e.name for e in everywhere.entities[:2]] == ["Tomasz Brejcha", "Tern S3"]
    assert only_b.entities[0].name == "Tomasz Brejcha"
    assert "Tern S3" not in {e.name for e in only_b.entities}  # a.md only: filtered out


SEARCHED = (Collection.ENTITIES, Collection.RELATIONS, Collection.CHUNKS)
MIX_QUESTION = "Who leads the Tern sensor team and what did the recall cost?"


def demo_docs() -> dict[str, str]:
    corpus = demo_data.CORPUS
    return {f.name: f.read_text(encoding="utf-8") for f in sorted(corpus.iterdir())}


class TimedSearches:
    """A search store that records when each collection's searches run, the searches of
    `slow` after a pause, so that they end last."""

    def __init__(self, inner: SearchStore, slow: Collection | None) -> None:
        self._inner = inner
        self._slow = slow
        self.runs: list[tuple[Collection, float, float]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def search_terms(self, collection: Collection, *args: Any, **kw: Any) -> list[Hit]:
        return await self._timed(
            collection, lambda: self._inner.search_terms(collection, *args, **kw)
        )

    async def search_vector(self, collection: Collection, *args: Any, **kw: Any) -> list[Hit]:
        return await self._timed(
            collection, lambda: self._inner.search_vector(collection, *args, **kw)
        )

    async def _timed(
        self, collection: Collection, search: Callable[[], Awaitable[list[Hit]]]
    ) -> list[Hit]:
        started = time.monotonic()
        if collection is self._slow:
            await asyncio.sleep(0.3)
        try:
            return await search()
        finally:
            self.runs.append((collection, started, time.monotonic()))

    def ended(self, collection: Collection) -> bool:
        return any(c is collection for c, _, _ in self.runs)

    def span(self, collection: Collection) -> tuple[float, float]:
        runs = [(s, e) for c, s, e in self.runs if c is collection]
        return min(s for s, _ in runs), max(e for _, e in runs)


def outline(r: Retrieval) -> tuple[list[str], ...]:
    return [e.key for e in r.entities], [x.key for x in r.relations], [c.chunk_id for c in r.chunks]


async def test_mix_searches_run_together_and_merge_in_a_fixed_order(tmp_path: Path) -> None:
    ask = question(MIX_QUESTION, Mode.MIX)
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await index(pipeline, demo_docs())
        outlines, runs = [], {}
        for slow in (None, Collection.ENTITIES, Collection.RELATIONS, Collection.CHUNKS):
            store = TimedSearches(pipeline.backends.stores.search, slow)
            stores = replace(pipeline.backends.stores, search=store)
            embedder = pipeline.backends.providers.embeddings.view(Priority.QUERY)
            timer = StageTimer()
            outlines.append(outline(await QueryEngine(stores, embedder, None).retrieve(ask, timer)))
            runs[slow] = store
    entities, relations, chunks = outlines[0]
    assert entities and relations and chunks
    # Whichever search ends last, the context is the same, in the same order.
    assert all(o == outlines[0] for o in outlines)
    # The searches overlap: the others start before the slowed one ends (run one after
    # another, the searches after a slowed entity search would wait for it).
    for slow, store in runs.items():
        if slow is not None:
            slow_end = store.span(slow)[1]
            assert all(store.span(other)[0] < slow_end for other in SEARCHED if other is not slow)
    names = [name for name, _ in timer.items()]
    assert names.index("search_entities") < names.index("search_relations")
    assert names.index("search_relations") < names.index("search_chunks")


class LexicalSearches(TimedSearches):
    """Records each BM25 search as (collection, terms) when it ends and each entity read as
    its ids; `all_searched` once every search of `expected` has ended and entities were read.
    (Waiting for one search of each collection is not enough: the keyword stage's entity
    search counts for the collection while local retrieval's may still be running.)"""

    def __init__(
        self, inner: SearchStore, expected: frozenset[tuple[Collection, tuple[str, ...]]]
    ) -> None:
        super().__init__(inner, None)
        self.expected = expected
        self.lexical: list[tuple[Collection, tuple[str, ...]]] = []
        self.entity_reads: list[tuple[str, ...]] = []
        self.all_searched = asyncio.Event()

    async def search_terms(self, collection: Collection, *args: Any, **kw: Any) -> list[Hit]:
        try:
            return await super().search_terms(collection, *args, **kw)
        finally:
            self.lexical.append((collection, tuple(args[1])))
            self._check()

    async def get(
        self, collection: Collection, workspace: str, ids: Sequence[str], *, whole: bool = True
    ) -> list[SearchRecord]:
        try:
            return await self._inner.get(collection, workspace, ids, whole=whole)
        finally:
            if collection is Collection.ENTITIES:
                self.entity_reads.append(tuple(ids))
                self._check()

    def _check(self) -> None:
        if set(self.lexical) >= self.expected and self.entity_reads:
            self.all_searched.set()


async def test_the_bm25_searches_run_while_the_query_is_embedded(tmp_path: Path) -> None:
    ask = question(MIX_QUESTION, Mode.MIX)
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await index(pipeline, demo_docs())
        embedder = pipeline.backends.providers.embeddings.view(Priority.QUERY)
        searched = LexicalSearches(pipeline.backends.stores.search, frozenset())
        plain = await QueryEngine(
            replace(pipeline.backends.stores, search=searched), embedder, None
        ).retrieve(ask, StageTimer())
        expected = frozenset(searched.lexical)
        assert {c for c, _ in expected} >= set(SEARCHED)
        store = LexicalSearches(pipeline.backends.stores.search, expected)
        held = HeldEmbedder(embedder)
        engine = QueryEngine(replace(pipeline.backends.stores, search=store), held, None)
        task = asyncio.create_task(engine.retrieve(ask, StageTimer()))
        await asyncio.wait_for(held.called.wait(), 10)
        await asyncio.wait_for(store.all_searched.wait(), 10)
        before, named = list(store.lexical), list(store.entity_reads)
        held.release.set()
        retrieval = await task
    # Every search's BM25 half ran (and ended) before a vector existed, and none ran again
    # once the vectors came; the entities the keywords name were read then too, once (the
    # reads after are the relations' endpoints); the context is what the same engine finds
    # searching in turn.
    assert store.lexical == before
    assert len(before) == len(set(before))
    assert [ids for ids in store.entity_reads if ids in named] == named
    assert named and any(retrieval.keywords.low)
    assert outline(retrieval) == outline(plain)


class FailingEntitySearch(TimedSearches):
    """The dense entity search (the local search's, not the keyword stage's name lookup)
    fails at once; the relation and chunk searches are slow."""

    async def search_vector(self, collection: Collection, *args: Any, **kw: Any) -> list[Hit]:
        if collection is Collection.ENTITIES:
            raise BackendUnavailableError("entity index unreachable")
        return await super().search_vector(collection, *args, **kw)

    async def _timed(
        self, collection: Collection, search: Callable[[], Awaitable[list[Hit]]]
    ) -> list[Hit]:
        if collection is not Collection.ENTITIES:
            await asyncio.sleep(0.5)
        return await super()._timed(collection, search)


async def test_a_failed_search_fails_the_query_and_cancels_the_others(tmp_path: Path) -> None:
    ask = question(MIX_QUESTION, Mode.MIX)
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await index(pipeline, demo_docs())
        store = FailingEntitySearch(pipeline.backends.stores.search, None)
        stores = replace(pipeline.backends.stores, search=store)
        embedder = pipeline.backends.providers.embeddings.view(Priority.QUERY)
        started = time.monotonic()
        with pytest.raises(BackendUnavailableError, match="entity index unreachable"):
            await QueryEngine(stores, embedder, None).retrieve(ask, StageTimer())
        assert time.monotonic() - started < 0.5  # it did not wait for the slow searches
        await asyncio.sleep(0.7)
    # The slow searches were cancelled, not left running after the query failed.
    assert not store.ended(Collection.RELATIONS) and not store.ended(Collection.CHUNKS)
