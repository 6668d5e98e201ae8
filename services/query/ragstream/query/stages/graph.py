"""Graph retrieval (LightRAG's dual level): entities and their relations, or relations and
their entities, from hybrid search plus one-hop expansion in the graph store.

`local`: entities found by the low-level keywords (those a keyword names exactly first), then
the relations around them: those of the best-found entity first, each entity's by the
endpoints' degrees and the relation weight. `global`: relations found by the high-level
keywords, then their endpoint entities. With a document filter, only entities and relations
mentioned by allowed documents take part, and their descriptions are rebuilt from those
documents' mentions alone, so nothing outside the filter reaches the context.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeVar

from opentelemetry.trace import Span

from ragstream.common.derive import Draft, merge, truncated
from ragstream.common.models import (
    Collection,
    GraphEdge,
    Hit,
    SearchFilter,
    Vector,
    entity_key,
)
from ragstream.common.storage.protocols import GraphStore, Stores
from ragstream.common.telemetry import annotate, own, span
from ragstream.common.text.analyzer import analyze
from ragstream.query.fusion import round_robin
from ragstream.query.prefetch import EarlyRead, Prefetch, RecordRead, records
from ragstream.query.search import SearchSpec, hybrid_search, lexical_search
from ragstream.query.types import ContextEntity, ContextRelation, QueryState

FILTERED_DESCRIPTION_TOKENS = 600
FIRST_EDGE_READ = 8
"""Entities whose edges local retrieval reads first (then twice as many, and so on)."""
LEVELS = ("low", "high")
"""The dual levels in the order their results merge: local, then global."""
Item = TypeVar("Item", ContextEntity, ContextRelation)


@dataclass(frozen=True, slots=True)
class GraphQuery:
    workspace: str
    text: str
    vector: Vector | None
    top_k: int
    candidates: int
    min_cosine: float
    rrf_k: int
    allowed_docs: frozenset[str] | None
    """None: no document filter. Otherwise only these documents count."""
    names: tuple[str, ...] = ()
    """Keywords that may be entity names: an entity named exactly so ranks first."""


def _spec(q: GraphQuery) -> SearchSpec:
    # An empty allowed set stays a filter that allows nothing (never "no filter").
    doc_filter = SearchFilter(doc_ids=q.allowed_docs)
    return SearchSpec(
        workspace=q.workspace,
        terms=analyze(q.text),
        vector=q.vector,
        search_filter=doc_filter,
        candidates=max(q.candidates, q.top_k),
        limit=q.top_k,
        rrf_k=q.rrf_k,
        min_cosine=q.min_cosine,
    )


def entity_of(hit: Hit) -> ContextEntity:
    attrs = hit.record.attrs
    return ContextEntity(
        key=hit.record.id,
        name=str(attrs.get("name", hit.record.id)),
        type=str(attrs.get("type", "")),
        description=str(attrs.get("description", "")),
        score=hit.score,
        doc_ids=hit.record.doc_ids,
        chunk_ids=tuple(attrs.get("source_ids", ())),
        aliases=hit.record.aliases,
    )


def relation_of(edge: GraphEdge, names: dict[str, str], score: float) -> ContextRelation:
    return ContextRelation(
        key=edge.key,
        source=names.get(edge.source, edge.source),
        target=names.get(edge.target, edge.target),
        keywords=edge.keywords,
        description=edge.description,
        weight=edge.weight,
        score=score,
        doc_ids=edge.doc_ids,
        chunk_ids=edge.source_ids,
    )


def _allowed(doc_ids: Sequence[str], allowed: frozenset[str] | None) -> bool:
    return allowed is None or bool(allowed.intersection(doc_ids))


def rank_edges(
    edges: Sequence[GraphEdge], degrees: dict[str, int], found: Sequence[str] = ()
) -> list[tuple[GraphEdge, float]]:
    """Edges around the found entities: those of the best-ranked entity first, then by the
    sum of their endpoints' degrees, then weight. The score is the degree sum.

    LightRAG orders by degree alone, which puts the hubs' edges first (two countries that a
    minor entity happens to touch) ahead of the edges of the entity the question names.
    """
    rank = {key: index for index, key in enumerate(found)}
    worst = len(found)
    unique = {edge.key: edge for edge in edges}

    def order(pair: tuple[GraphEdge, float]) -> tuple[int, float, float, str]:
        edge, degree = pair
        nearest = min(rank.get(edge.source, worst), rank.get(edge.target, worst))
        return nearest, -degree, -edge.weight, edge.key

    scored = [
        (e, float(degrees.get(e.source, 0) + degrees.get(e.target, 0))) for e in unique.values()
    ]
    return sorted(scored, key=order)


async def local_graph(
    stores: Stores, q: GraphQuery, prefetch: Prefetch | None = None
) -> tuple[list[ContextEntity], list[ContextRelation]]:
    hits = await hybrid_search(stores.search, Collection.ENTITIES, _spec(q), prefetch)
    entities = [entity_of(hit) for hit in await _named_first(stores, q, hits, prefetch)]
    keys = [e.key for e in entities]
    with span("graph_expand", attributes=own(direction="entities_to_relations")) as current:
        edges, read = await edges_in_rank_order(stores.graph, q, keys)
        endpoints = sorted({k for e in edges for k in (e.source, e.target)})
        degrees = await stores.graph.degrees(q.workspace, endpoints)
        ranked = rank_edges(edges, degrees, keys)[: q.top_k]
        names = await _names(stores, q.workspace, ranked, entities)
        annotate(
            current, entities=len(keys), entities_read=read, edges=len(edges), relations=len(ranked)
        )
    relations = [relation_of(edge, names, score) for edge, score in ranked]
    return await _filtered(stores, q, entities, relations)


async def edges_in_rank_order(
    graph: GraphStore, q: GraphQuery, keys: list[str]
) -> tuple[list[GraphEdge], int]:
    """The allowed edges of the found entities, read in the entities' rank order only as far
    as `rank_edges` needs: its first sort key is the best rank of an edge's endpoints, so
    once the edges of the first entities number `top_k`, no later entity's edge can come
    before them. A hub among the last entities then costs nothing. Also the entities read."""
    edges: dict[str, GraphEdge] = {}
    start, step = 0, FIRST_EDGE_READ
    while start < len(keys) and len(edges) < q.top_k:
        batch = keys[start : start + step]
        around = await graph.edges_of(q.workspace, batch)
        for key in batch:
            for edge in around.get(key, []):
                if _allowed(edge.doc_ids, q.allowed_docs):
                    edges.setdefault(edge.key, edge)
        start, step = start + len(batch), step * 2
    return list(edges.values()), min(start, len(keys))


def named_read(workspace: str, names: Sequence[str]) -> RecordRead:
    """The read of the entities the keywords name, as local retrieval makes it."""
    keys = dict.fromkeys(entity_key(name) for name in names if name.strip())
    return RecordRead(Collection.ENTITIES, workspace, tuple(keys))


async def _named_first(
    stores: Stores, q: GraphQuery, hits: list[Hit], prefetch: Prefetch | None
) -> list[Hit]:
    """The entities the keywords name exactly, in keyword order, then the other hits.

    A search for "Watertown International Airport, Alexandria International Airport" can rank
    "Louisiana" (described alongside one of them) above the other airport; an exact name is
    the strongest evidence there is of what the question is about.
    """
    read = named_read(q.workspace, q.names)
    if not read.ids:
        return hits
    found = {r.id: r for r in await records(stores.search, read, prefetch)}
    # A name entity resolution merged into another entity pins that entity (its alias).
    for hit in hits:
        for member in hit.record.attrs.get("members") or ():
            found.setdefault(str(member), hit.record)
    scores = {hit.record.id: hit.score for hit in hits}
    top = max(scores.values(), default=1.0)
    named = [
        Hit(found[key], scores.get(found[key].id, top))
        for key in read.ids
        if key in found and _allowed(found[key].doc_ids, q.allowed_docs)
    ]
    named = list({hit.record.id: hit for hit in named[::-1]}.values())[::-1]
    pinned = {hit.record.id for hit in named}
    return [*named, *(hit for hit in hits if hit.record.id not in pinned)][: q.top_k]


async def global_graph(
    stores: Stores, q: GraphQuery, prefetch: Prefetch | None = None
) -> tuple[list[ContextEntity], list[ContextRelation]]:
    hits = await hybrid_search(stores.search, Collection.RELATIONS, _spec(q), prefetch)
    pairs = [(str(h.record.attrs["source"]), str(h.record.attrs["target"])) for h in hits]
    with span("graph_expand", attributes=own(direction="relations_to_entities")) as current:
        edges = await stores.graph.get_edges(q.workspace, pairs)
        endpoints = list(dict.fromkeys(k for e in edges for k in (e.source, e.target)))
        nodes, aliases = await asyncio.gather(
            stores.graph.get_nodes(q.workspace, endpoints),
            _aliases(stores, q.workspace, endpoints),
        )
        annotate(current, relations=len(edges), entities=len(nodes))
    scores = {h.record.id: h.score for h in hits}
    allowed = [n for n in nodes if _allowed(n.doc_ids, q.allowed_docs)]
    entities = [
        ContextEntity(
            n.key, n.name, n.type, n.description, 0.0, n.doc_ids, n.source_ids, aliases[n.key]
        )
        for n in allowed
    ]
    names = {n.key: n.name for n in nodes}
    relations = [relation_of(e, names, scores.get(e.key, 0.0)) for e in edges]
    return await _filtered(stores, q, entities, relations)


async def _aliases(stores: Stores, workspace: str, keys: list[str]) -> dict[str, tuple[str, ...]]:
    """Per entity key, the other names resolution merged into it (on its search record)."""
    records = await stores.search.get(Collection.ENTITIES, workspace, keys, whole=False)
    found = {r.id: r.aliases for r in records}
    return {key: found.get(key, ()) for key in keys}


async def _names(
    stores: Stores,
    workspace: str,
    ranked: list[tuple[GraphEdge, float]],
    known: list[ContextEntity],
) -> dict[str, str]:
    names = {e.key: e.name for e in known}
    missing = sorted({k for edge, _ in ranked for k in (edge.source, edge.target)} - names.keys())
    for node in await stores.graph.get_nodes(workspace, missing):
        names[node.key] = node.name
    return names


async def _filtered(
    stores: Stores,
    q: GraphQuery,
    entities: list[ContextEntity],
    relations: list[ContextRelation],
) -> tuple[list[ContextEntity], list[ContextRelation]]:
    """With a document filter, descriptions and sources come from allowed documents only."""
    allowed = q.allowed_docs
    if allowed is None:
        return entities, relations
    members = await _members(stores, q.workspace, entities, relations)
    raw = sorted({k for ks in members.values() for k in ks})
    mentions = await stores.mentions.mentions_of(q.workspace, raw)
    rebuilt = {}
    for key, merged in members.items():
        kept = [m for k in merged for m in mentions.get(k, []) if m.doc_id in allowed]
        if kept:
            rebuilt[key] = merge(key, kept)
    entities = [_rebuilt(e, d) for e in entities if (d := rebuilt.get(e.key))]
    relations = [_rebuilt(r, d) for r in relations if (d := rebuilt.get(r.key))]
    return entities, relations


async def _members(
    stores: Stores,
    workspace: str,
    entities: list[ContextEntity],
    relations: list[ContextRelation],
) -> dict[str, list[str]]:
    """The ledger keys each entity and relation was merged from: its own, or its alias
    group's when entity resolution merged several (the record's `members`)."""
    members: dict[str, list[str]] = {}
    for collection, items in (
        (Collection.ENTITIES, [e.key for e in entities]),
        (Collection.RELATIONS, [r.key for r in relations]),
    ):
        records = await stores.search.get(collection, workspace, items, whole=False)
        stored = {r.id: r.attrs.get("members") for r in records}
        members |= {key: [str(k) for k in stored.get(key) or [key]] for key in items}
    return members


def _rebuilt(item: Item, draft: Draft) -> Item:
    description = truncated(draft.fragments, FILTERED_DESCRIPTION_TOKENS)
    return replace(item, description=description, doc_ids=draft.doc_ids, chunk_ids=draft.chunk_ids)


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=_Keyed)


def merge_by_key(groups: list[list[K]]) -> list[K]:
    """Round-robin over the groups (local, global), each item once."""
    by_key = {item.key: item for group in groups for item in group}
    return [by_key[k] for k in round_robin([[item.key for item in group] for group in groups])]


class _LevelSearch:
    """One level of the dual-level search, on the keywords embedded for it."""

    name: str
    level: str
    """The embedded text it searches with: "low" (local) or "high" (global)."""
    collection: Collection

    def __init__(self, stores: Stores, candidates: int, rrf_k: int) -> None:
        self._stores = stores
        self._candidates = candidates
        self._rrf_k = rrf_k

    def applies(self, state: QueryState) -> bool:
        return bool(state.texts.get(self.level))

    def early(self, state: QueryState) -> list[EarlyRead]:
        return [lexical_search(self.collection, _spec(self.query(state)))]

    def query(self, state: QueryState) -> GraphQuery:
        o = state.q.options
        return GraphQuery(
            state.q.workspace,
            state.texts[self.level],
            state.vector(self.level),
            o.top_k,
            self._candidates,
            o.cosine_threshold,
            self._rrf_k,
            state.allowed,
        )

    def found(
        self,
        state: QueryState,
        span: Span,
        found: tuple[list[ContextEntity], list[ContextRelation]],
    ) -> None:
        annotate(span, entities=len(found[0]), relations=len(found[1]))
        state.entity_groups[self.level] = found[0]
        state.relation_groups[self.level] = found[1]
        # Local before global, whichever search ended first (they may run concurrently).
        state.result.entities = merge_by_key(_by_level(state.entity_groups))
        state.result.relations = merge_by_key(_by_level(state.relation_groups))


def _by_level(groups: dict[str, list[K]]) -> list[list[K]]:
    return [groups[level] for level in LEVELS if level in groups]


class EntitySearch(_LevelSearch):
    """Local: entities by the low-level keywords, those named exactly first."""

    name = "search_entities"
    level = "low"
    collection = Collection.ENTITIES

    def early(self, state: QueryState) -> list[EarlyRead]:
        named = named_read(state.q.workspace, state.result.keywords.low)
        return [*super().early(state), named]

    async def run(self, state: QueryState, span: Span) -> None:
        query = replace(self.query(state), names=state.result.keywords.low)
        self.found(state, span, await local_graph(self._stores, query, state.prefetch))


class RelationSearch(_LevelSearch):
    """Global: relations by the high-level keywords."""

    name = "search_relations"
    level = "high"
    collection = Collection.RELATIONS

    async def run(self, state: QueryState, span: Span) -> None:
        found = await global_graph(self._stores, self.query(state), state.prefetch)
        self.found(state, span, found)
