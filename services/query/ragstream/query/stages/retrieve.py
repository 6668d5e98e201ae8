"""Chunk search stage: the query (and its sub-queries) against the chunks, hybrid."""

from __future__ import annotations

import asyncio

from opentelemetry.trace import Span

from ragstream.common.models import Collection, Hit, Vector
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.telemetry import annotate
from ragstream.common.text.analyzer import analyze
from ragstream.query.fusion import fuse_rankings
from ragstream.query.prefetch import LexicalSearch
from ragstream.query.search import SearchSpec, hybrid_search, lexical_search
from ragstream.query.types import QueryState


class ChunkSearch:
    """The chunk search of `naive` and `mix`: the query against the chunks, hybrid."""

    name = "search_chunks"

    def __init__(self, store: SearchStore, candidates: int, rrf_k: int) -> None:
        self._store = store
        self._candidates = candidates
        self._rrf_k = rrf_k

    def applies(self, state: QueryState) -> bool:
        return True  # timed in every mode, so every response reports the same stages

    def early(self, state: QueryState) -> list[LexicalSearch]:
        return [
            lexical_search(Collection.CHUNKS, self._spec(state, text, None))
            for text, _ in self._texts(state)
        ]

    async def run(self, state: QueryState, current: Span) -> None:
        if searches := self._texts(state):
            rankings = await asyncio.gather(
                *(self._search(state, text, state.vector(name)) for text, name in searches)
            )
            state.chunk_hits = fuse_rankings(rankings, state.q.options.chunk_top_k, self._rrf_k)
        annotate(current, hits=len(state.chunk_hits), searches=1 + len(state.sub_queries))

    @staticmethod
    def _texts(state: QueryState) -> list[tuple[str, str]]:
        """(text, name of its vector) of each search; none when the mode reads no chunks."""
        if not state.q.options.mode.searches_chunks:
            return []
        return [
            (state.q.query, "query"),
            *((text, f"sub:{i}") for i, text in enumerate(state.sub_queries)),
        ]

    async def _search(self, state: QueryState, text: str, vector: Vector | None) -> list[Hit]:
        spec = self._spec(state, text, vector)
        return await hybrid_search(self._store, Collection.CHUNKS, spec, state.prefetch)

    def _spec(self, state: QueryState, text: str, vector: Vector | None) -> SearchSpec:
        o = state.q.options
        return SearchSpec(
            state.q.workspace,
            analyze(text),
            vector,
            state.search_filter(),
            max(self._candidates, o.chunk_top_k),
            o.chunk_top_k,
            self._rrf_k,
            o.cosine_threshold,
        )
