"""Chunks for graph hits, and the round-robin merge of chunk sources.

VECTOR ranks an entity's (or relation's) source chunks by similarity to the query; WEIGHT
ranks them by how many of the top entities or relations also come from them. VECTOR falls
back to WEIGHT when there is no query vector (or a zero one: a query in a language the
embedder does not serve) or it finds nothing. Each hit contributes at
most `per_item` chunks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np
from opentelemetry.trace import Span

from ragstream.common.models import Collection
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.telemetry import annotate
from ragstream.query.fusion import round_robin
from ragstream.query.search import chunk_records
from ragstream.query.types import QueryState

T = TypeVar("T", bound=Hashable)


def pick_by_weight(per_hit: Sequence[Sequence[str]], per_item: int) -> list[list[str]]:
    """Each hit's chunks, ordered by how many hits share them (then by original order)."""
    shared = Counter(cid for ids in per_hit for cid in dict.fromkeys(ids))
    return [sorted(dict.fromkeys(ids), key=lambda cid: -shared[cid])[:per_item] for ids in per_hit]


def pick_by_vector(
    per_hit: Sequence[Sequence[str]], similarity: Mapping[str, float], per_item: int
) -> list[list[str]]:
    """Each hit's chunks, ordered by their similarity to the query (ties in hit order)."""
    picked: list[list[str]] = []
    for ids in per_hit:
        known = [cid for cid in dict.fromkeys(ids) if cid in similarity]
        picked.append(sorted(known, key=lambda cid: -similarity[cid])[:per_item])
    return picked


def pick_chunks(
    per_hit: Sequence[Sequence[str]],
    similarity: Mapping[str, float] | None,
    live: Container[str],
    method: str,
    per_item: int,
) -> list[str]:
    """The chunks for graph hits, round-robin over hits (best hit first). `live` holds the
    chunks that still exist and pass the filter; `similarity` (None: no query vector) their
    cosine to the query."""
    kept = [[cid for cid in ids if cid in live] for ids in per_hit]
    picked: list[list[str]] = []
    if method == "VECTOR" and similarity is not None:
        picked = pick_by_vector(kept, similarity, per_item)
    if not any(picked):
        picked = pick_by_weight(kept, per_item)
    return round_robin(picked)


class GraphChunks:
    """The chunks the found entities and relations come from, picked per hit."""

    name = "graph_chunks"

    def __init__(self, store: SearchStore) -> None:
        self._store = store

    def applies(self, state: QueryState) -> bool:
        return True

    async def run(self, state: QueryState, current: Span) -> None:
        result, o = state.result, state.q.options
        per_entity = [list(e.chunk_ids) for e in result.entities]
        per_relation = [list(r.chunk_ids) for r in result.relations]
        ids = list(dict.fromkeys(c for group in (*per_entity, *per_relation) for c in group))
        similarity, live = await self._live(state, ids)
        state.graph_sources = [
            pick_chunks(group, similarity, live, o.chunk_pick_method, o.related_chunk_number)
            for group in (per_entity, per_relation)
            if group
        ]
        annotate(current, chunks=sum(len(source) for source in state.graph_sources))

    async def _live(
        self, state: QueryState, ids: list[str]
    ) -> tuple[dict[str, float] | None, Container[str]]:
        """(similarity to the query vector, the chunks that exist and pass the filter); the
        store scores the chunks itself, so no record is read."""
        query = state.vector("query")
        ws, search_filter = state.q.workspace, state.search_filter()
        if query is not None:
            similarity = await self._store.similarities(
                Collection.CHUNKS, ws, ids, query, search_filter
            )
            # A zero query vector (a language the embedder does not serve) ranks nothing.
            return (similarity if np.any(query) else None), similarity
        records = await chunk_records(self._store, ws, ids)
        allowed = state.allowed
        return None, {i for i, r in records.items() if allowed is None or allowed & set(r.doc_ids)}
