"""Search primitives shared by the query stages and the graph API.

Hybrid search over one collection: BM25 and dense run concurrently, fused by RRF. The BM25
half may have been started already, while the query was embedded (prefetch.py).

Filters go into both searches (inside the search, never after), and dense hits below the
cosine threshold are dropped before fusion, so a weak vector neighbour cannot ride in on
its rank alone. A query the embedder does not serve has a zero vector (its language is not
the embedder's: providers/gate.py); the search is then BM25 alone, whatever the retriever.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord, Vector
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.telemetry import annotate, own, span
from ragstream.query.fusion import reciprocal_rank_fusion
from ragstream.query.prefetch import LexicalSearch, Prefetch


class Retriever(enum.StrEnum):
    BM25 = "bm25"
    DENSE = "dense"
    HYBRID = "hybrid"


@dataclass(frozen=True, slots=True)
class SearchSpec:
    workspace: str
    terms: Sequence[str]
    vector: Vector | None
    search_filter: SearchFilter
    candidates: int
    """Hits each search contributes before fusion."""
    limit: int
    rrf_k: int = 60
    min_cosine: float = -1.0
    retriever: Retriever = Retriever.HYBRID


async def hybrid_search(
    store: SearchStore, collection: Collection, spec: SearchSpec, prefetch: Prefetch | None = None
) -> list[Hit]:
    """The fused hits, best first, each scored by its RRF score."""
    attributes = own(collection=collection.value, retriever=spec.retriever.value)
    with span("hybrid_search", attributes=attributes) as current:
        lexical, dense = await asyncio.gather(
            _lexical(store, collection, spec, prefetch), _dense(store, collection, spec)
        )
        hits = _combine(lexical, dense, spec)
        annotate(current, lexical_hits=len(lexical), dense_hits=len(dense), hits=len(hits))
        return hits


def has_direction(vector: Vector | None) -> bool:
    """False for no vector and for the zero vector of a text the embedder does not serve."""
    return vector is not None and bool(np.any(vector))


def _combine(lexical: list[Hit], dense: list[Hit], spec: SearchSpec) -> list[Hit]:
    if spec.retriever is Retriever.BM25 or not has_direction(spec.vector):
        return lexical[: spec.limit]
    if spec.retriever is Retriever.DENSE:
        return dense[: spec.limit]
    by_id = {hit.record.id: hit.record for hit in (*lexical, *dense)}
    fused = reciprocal_rank_fusion(
        [[hit.record.id for hit in lexical], [hit.record.id for hit in dense]], k=spec.rrf_k
    )
    return [Hit(by_id[rid], score) for rid, score in fused[: spec.limit]]


def lexical_search(collection: Collection, spec: SearchSpec) -> LexicalSearch:
    """The BM25 search `hybrid_search` makes for `spec` (whatever its vector)."""
    return LexicalSearch(
        collection, spec.workspace, tuple(spec.terms), spec.search_filter, spec.candidates
    )


async def _lexical(
    store: SearchStore, collection: Collection, spec: SearchSpec, prefetch: Prefetch | None
) -> list[Hit]:
    if not spec.terms or (spec.retriever is Retriever.DENSE and has_direction(spec.vector)):
        return []
    search = lexical_search(collection, spec)
    started = prefetch.take(search) if prefetch is not None else None
    if started is not None:
        return await started
    return await store.search_terms(
        collection, search.workspace, search.terms, search.search_filter, search.limit
    )


async def _dense(store: SearchStore, collection: Collection, spec: SearchSpec) -> list[Hit]:
    if spec.retriever is Retriever.BM25 or spec.vector is None or not np.any(spec.vector):
        return []
    return await store.search_vector(
        collection,
        spec.workspace,
        spec.vector,
        spec.search_filter,
        spec.candidates,
        min_score=spec.min_cosine,
    )


async def chunk_records(
    store: SearchStore, workspace: str, ids: Sequence[str]
) -> dict[str, SearchRecord]:
    """The chunks of `ids` that exist, by id (as hits carry them: no terms, no vector)."""
    records = await store.get(Collection.CHUNKS, workspace, list(ids), whole=False)
    return {r.id: r for r in records}
