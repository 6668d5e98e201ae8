"""Builds a query's context by mode: keywords, one embedding request, the searches, the
graph expansion, the chunks for graph hits, and the round-robin merge of chunk sources.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Protocol, TypeVar

from ragstream.common.instruments import record_rerank_degraded
from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord, Vector
from ragstream.common.providers.embedding import Embedder
from ragstream.common.providers.llm import ChatModel
from ragstream.common.storage.protocols import Stores
from ragstream.common.telemetry import annotate
from ragstream.common.text.analyzer import analyze
from ragstream.common.text.tokens import count_tokens
from ragstream.common.timing import StageTimer
from ragstream.query.stages import keywords as kw
from ragstream.query.stages.graph import GraphQuery, GraphStores, global_graph, local_graph
from ragstream.query.stages.pick import pick_chunks, round_robin
from ragstream.query.stages.rerank import SKIPPED_NOTE, Reranking, rerank_chunks
from ragstream.query.stages.retrieve import SearchSpec, hybrid_search
from ragstream.query.transport.interceptors import seconds_left
from ragstream.query.types import (
    ContextChunk,
    ContextEntity,
    ContextRelation,
    Keywords,
    Mode,
    QueryInput,
    Reference,
    Retrieval,
)

log = logging.getLogger(__name__)
LOCAL_MODES = (Mode.LOCAL, Mode.HYBRID, Mode.MIX)
GLOBAL_MODES = (Mode.GLOBAL, Mode.HYBRID, Mode.MIX)
CHUNK_MODES = (Mode.NAIVE, Mode.MIX)


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


class ContextBuilder:
    def __init__(
        self,
        stores: Stores,
        embedder: Embedder,
        chat: ChatModel | None,
        candidates: int,
        rrf_k: int,
        reranking: Reranking | None = None,
    ) -> None:
        self._reranking = reranking
        self._stores = stores
        self._graph_stores = GraphStores(stores.search, stores.graph, stores.mentions)
        self._embedder = embedder
        self._chat = chat
        self._candidates = candidates
        self._rrf_k = rrf_k

    async def build(
        self, q: QueryInput, allowed: frozenset[str] | None, timer: StageTimer
    ) -> Retrieval:
        mode = q.options.mode
        result = Retrieval(query_terms=tuple(analyze(q.query)))
        if mode is not Mode.NAIVE:
            with timer.stage("keywords") as span:
                result.keywords = await self._keywords(q)
                annotate(span, high=len(result.keywords.high), low=len(result.keywords.low))
        low = ", ".join(result.keywords.low) if mode in LOCAL_MODES else ""
        high = ", ".join(result.keywords.high) if mode in GLOBAL_MODES else ""
        with timer.stage("embed") as span:
            vectors = await self._embed_all([q.query, low, high])
            annotate(span, texts=len(vectors))
        query_vec, low_vec, high_vec = (vectors.get(t) for t in (q.query, low, high))
        await self._graph(q, result, ((low, low_vec), (high, high_vec)), allowed, timer)
        with timer.stage("search_chunks") as span:
            naive = await self._chunk_search(q, query_vec, allowed) if mode in CHUNK_MODES else []
            annotate(span, hits=len(naive))
        with timer.stage("graph_chunks") as span:
            graph_sources = await self._graph_chunks(q, result, query_vec, allowed)
            annotate(span, chunks=sum(len(source) for source in graph_sources))
        with timer.stage("fuse") as span:
            result.chunks, result.references = await self._fuse(q, naive, graph_sources)
            annotate(span, chunks=len(result.chunks), references=len(result.references))
        if self._reranking is not None and q.options.enable_rerank:
            await self._rerank(q, result, timer)
        elif q.options.enable_rerank:
            result.notes.append(SKIPPED_NOTE)
        result.chunks = result.chunks[: q.options.chunk_top_k]
        result.chunks, result.references = cite(result.chunks)
        return result

    async def _rerank(self, q: QueryInput, result: Retrieval, timer: StageTimer) -> None:
        reranking = self._reranking
        assert reranking is not None
        # Little time left before the caller's deadline degrades the rerank (top 20 only).
        with timer.stage("rerank") as span, reranking.gauge.track(seconds_left()) as load:
            outcome = await rerank_chunks(
                reranking.reranker, q.query, result.chunks, q.options, load, reranking.cfg
            )
            annotate(span, candidates=len(result.chunks), kept=len(outcome.chunks))
        result.chunks = outcome.chunks
        if outcome.note:
            result.notes.append(outcome.note)
            if outcome.note.startswith("rerank degraded"):
                record_rerank_degraded("load")
            elif outcome.note.startswith("rerank failed"):
                record_rerank_degraded("failed")

    async def _fuse(
        self, q: QueryInput, naive: list[Hit], graph_sources: list[list[str]]
    ) -> tuple[list[ContextChunk], list[Reference]]:
        """Round-robin over the chunk sources (chunk search first), each chunk once, cited."""
        # A reranker gets a wider pool to choose from; the cut to chunk_top_k follows it.
        pool = q.options.chunk_top_k
        if self._reranking is not None and q.options.enable_rerank:
            pool = max(pool, self._reranking.pool)
        merged = round_robin([[h.record.id for h in naive], *graph_sources])[:pool]
        records = {h.record.id: h.record for h in naive} | await self._records(q.workspace, merged)
        scores = {h.record.id: h.score for h in naive}
        return _cite([(records[i], scores.get(i, 0.0)) for i in merged if i in records])

    async def _graph(
        self,
        q: QueryInput,
        result: Retrieval,
        levels: tuple[tuple[str, Vector | None], tuple[str, Vector | None]],
        allowed: frozenset[str] | None,
        timer: StageTimer,
    ) -> None:
        """Local (entities by low-level keywords), then global (relations by high-level)."""
        entities: list[list[ContextEntity]] = []
        relations: list[list[ContextRelation]] = []
        searches = (("search_entities", local_graph), ("search_relations", global_graph))
        for (stage, search), (text, vector) in zip(searches, levels, strict=True):
            if not text:
                continue
            query = self._graph_query(q, text, vector, allowed)
            if search is local_graph:
                query = replace(query, names=result.keywords.low)
            with timer.stage(stage) as span:
                found = await search(self._graph_stores, query)
                annotate(span, entities=len(found[0]), relations=len(found[1]))
            entities.append(found[0])
            relations.append(found[1])
        result.entities = _merge_by_key(entities)
        result.relations = _merge_by_key(relations)

    async def _keywords(self, q: QueryInput) -> Keywords:
        if q.options.hl_keywords or q.options.ll_keywords:
            return Keywords(high=q.options.hl_keywords, low=q.options.ll_keywords)
        if self._chat is not None:
            return await kw.llm_keywords(self._chat, self._stores.cache, q.query)
        spec = SearchSpec(q.workspace, analyze(q.query), None, SearchFilter(), 30, 30)
        hits = await hybrid_search(self._stores.search, Collection.ENTITIES, spec)
        return kw.offline_keywords(q.query, [str(h.record.attrs.get("name", "")) for h in hits])

    async def _embed_all(self, texts: list[str]) -> dict[str, Vector]:
        """Every text the mode needs in one request; on failure, each on its own (logged)."""
        wanted = [t for t in dict.fromkeys(texts) if t]
        try:
            return dict(zip(wanted, await self._embedder.embed(wanted), strict=True))
        except Exception:  # the batch failing must not fail the query; single requests may work
            log.warning(
                "batched query embedding failed; embedding each text on its own", exc_info=True
            )
        singles = await asyncio.gather(*(self._embedder.embed([t]) for t in wanted))
        return {t: v[0] for t, v in zip(wanted, singles, strict=True)}

    def _graph_query(
        self, q: QueryInput, text: str, vector: Vector | None, allowed: frozenset[str] | None
    ) -> GraphQuery:
        o = q.options
        return GraphQuery(
            q.workspace,
            text,
            vector,
            o.top_k,
            self._candidates,
            o.cosine_threshold,
            self._rrf_k,
            allowed,
        )

    async def _chunk_search(
        self, q: QueryInput, vector: Vector | None, allowed: frozenset[str] | None
    ) -> list[Hit]:
        search_filter = SearchFilter(doc_ids=allowed) if allowed is not None else SearchFilter()
        spec = SearchSpec(
            q.workspace,
            analyze(q.query),
            vector,
            search_filter,
            max(self._candidates, q.options.chunk_top_k),
            q.options.chunk_top_k,
            self._rrf_k,
            q.options.cosine_threshold,
        )
        return await hybrid_search(self._stores.search, Collection.CHUNKS, spec)

    async def _graph_chunks(
        self,
        q: QueryInput,
        result: Retrieval,
        vector: Vector | None,
        allowed: frozenset[str] | None,
    ) -> list[list[str]]:
        per_entity = [list(e.chunk_ids) for e in result.entities]
        per_relation = [list(r.chunk_ids) for r in result.relations]
        ids = list(dict.fromkeys(c for group in (*per_entity, *per_relation) for c in group))
        records = await self._records(q.workspace, ids)
        if allowed is not None:
            records = {i: r for i, r in records.items() if allowed.intersection(r.doc_ids)}
        o = q.options
        return [
            pick_chunks(group, records, vector, o.chunk_pick_method, o.related_chunk_number)
            for group in (per_entity, per_relation)
            if group
        ]

    async def _records(self, workspace: str, ids: list[str]) -> dict[str, SearchRecord]:
        found = await self._stores.search.get(Collection.CHUNKS, workspace, ids)
        return {r.id: r for r in found}


def _merge_by_key(groups: list[list[K]]) -> list[K]:
    """Round-robin over the groups (local, global), each item once."""
    by_key = {item.key: item for group in groups for item in group}
    return [by_key[k] for k in round_robin([[item.key for item in group] for group in groups])]


def _cite(hits: list[tuple[SearchRecord, float]]) -> tuple[list[ContextChunk], list[Reference]]:
    """Numbers the source documents in order of first appearance; chunks cite them."""
    chunks = []
    for record, score in hits:
        doc_id = record.doc_ids[0] if record.doc_ids else ""
        path = str(record.attrs.get("file_path", ""))
        tokens = int(record.attrs.get("tokens", 0)) or count_tokens(record.text)
        chunks.append(ContextChunk(record.id, doc_id, path, record.text, score, tokens))
    return cite(chunks)


def cite(chunks: list[ContextChunk]) -> tuple[list[ContextChunk], list[Reference]]:
    """(Re)numbers the chunks' documents in order of first appearance."""
    refs: dict[str, Reference] = {}
    cited = []
    for chunk in chunks:
        ref = refs.setdefault(
            chunk.doc_id, Reference(str(len(refs) + 1), chunk.doc_id, chunk.file_path)
        )
        cited.append(replace(chunk, reference_id=ref.reference_id))
    return cited, list(refs.values())
