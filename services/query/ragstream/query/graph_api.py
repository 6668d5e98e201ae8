"""What GraphService answers, over the same search and graph stores as the query path.

Entity search is the query path's hybrid search (BM25 and dense, fused by reciprocal rank
fusion) on the entity collection, ordered for a name search by `entity_ranking` (the entity
named exactly so first, then those the query names, better connected first). Entities and
relations are read from the graph store, with their degrees, and an entity's aliases from
its search record. A neighbourhood is a capped breadth-first walk
(`neighbourhood.next_ring`), then the relations among the entities it kept. Every read is
scoped by workspace; nothing here knows which backend it talks to, nor which transport asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ragstream.common.config import QueryDefaults
from ragstream.common.models import Collection, GraphEdge, GraphNode, SearchFilter, entity_key
from ragstream.common.providers.embedding import Embedder
from ragstream.common.storage.protocols import GraphStore, SearchStore
from ragstream.common.text.analyzer import analyze
from ragstream.common.text.fold import fold
from ragstream.query.entity_ranking import Candidate, rank
from ragstream.query.lease import remote
from ragstream.query.neighbourhood import Reached, next_ring, ranked
from ragstream.query.search import SearchSpec, hybrid_search

MAX_SOURCE_CHUNKS = 20
"""Source chunks returned with an entity or relation."""
ALIAS_CANDIDATES = 10
"""Entities whose aliases are checked for a name that is no entity's own."""


class NotFound(LookupError):
    """The workspace has no such entity or relation; the message names what was asked for."""


@dataclass(frozen=True, slots=True)
class EntityInfo:
    node: GraphNode
    degree: int
    aliases: tuple[str, ...] = ()
    """The other names resolution merged into the entity (read by `entities` only)."""


@dataclass(frozen=True, slots=True)
class RelationInfo:
    edge: GraphEdge
    source_name: str
    target_name: str
    degree: int
    """Both endpoints' degrees added up."""


@dataclass(frozen=True, slots=True)
class SourceText:
    chunk_id: str
    doc_id: str
    file_path: str
    content: str


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    nodes: list[tuple[EntityInfo, int]]
    """(entity, hops from the centre), the centre first."""
    relations: list[RelationInfo]
    truncated: bool


@dataclass(frozen=True, slots=True)
class GraphSummary:
    entities: int
    relations: int
    top: list[EntityInfo] = field(default_factory=list)


class GraphReader:
    def __init__(
        self, search: SearchStore, graph: GraphStore, embedder: Embedder, cfg: QueryDefaults
    ) -> None:
        self._search = search
        self._graph = graph
        self._embedder = embedder
        self._cfg = cfg

    async def search(self, workspace: str, text: str, limit: int) -> list[tuple[EntityInfo, float]]:
        """Entities matching `text`, in `entity_ranking`'s order, with their fused scores."""
        async with remote():
            vector = (await self._embedder.embed([text]))[0]
        spec = SearchSpec(
            workspace=workspace,
            terms=analyze(text),
            vector=vector,
            search_filter=SearchFilter(),
            candidates=max(self._cfg.candidates, limit),
            limit=max(self._cfg.candidates, limit),
            rrf_k=self._cfg.rrf_k,
            min_cosine=self._cfg.cosine_threshold,
        )
        hits = await hybrid_search(self._search, Collection.ENTITIES, spec)
        scores = {hit.record.id: hit.score for hit in hits}
        # The entity named exactly so is a candidate even when the search ranked it low.
        named = entity_key(text)
        found = await self.entities(workspace, [named, *(k for k in scores if k != named)])
        top = max(scores.values(), default=1.0)
        candidates = [
            Candidate(i.node.key, i.node.name, i.aliases, i.degree, scores.get(i.node.key, top))
            for i in found
        ]
        by_key = {info.node.key: info for info in found}
        return [(by_key[c.key], c.score) for c in rank(text, candidates)[:limit]]

    async def entities(self, workspace: str, keys: Sequence[str]) -> list[EntityInfo]:
        """The entities that exist among `keys`, in that order, with their degrees and the
        aliases entity resolution gave them."""
        nodes = await self._graph.get_nodes(workspace, keys)
        present = [n.key for n in nodes]
        degrees = await self._graph.degrees(workspace, present)
        records = await self._search.get(Collection.ENTITIES, workspace, present, whole=False)
        aliases = {r.id: r.aliases for r in records}
        return [EntityInfo(n, degrees.get(n.key, 0), aliases.get(n.key, ())) for n in nodes]

    async def resolved_key(self, workspace: str, name: str) -> str:
        """The key of the entity `name` names: its own, or that of the resolved entity that
        holds it as an alias (entity resolution merged it there), found among the entities
        that BM25 finds for the name, since aliases are terms of their entity."""
        key = entity_key(name)
        if await self._graph.get_nodes(workspace, [key]):
            return key
        hits = await self._search.search_terms(
            Collection.ENTITIES, workspace, analyze(name), SearchFilter(), ALIAS_CANDIDATES
        )
        folded = fold(key)
        for hit in hits:
            members = hit.record.attrs.get("members") or ()
            if key in members or folded in {fold(str(m)) for m in members}:
                return hit.record.id
        return key

    async def entity(self, workspace: str, name: str) -> EntityInfo:
        found = await self.entities(workspace, [await self.resolved_key(workspace, name)])
        if not found:
            raise NotFound(f"workspace {workspace!r} has no entity named so")
        return found[0]

    async def relation(self, workspace: str, source: str, target: str) -> RelationInfo:
        pair = (
            await self.resolved_key(workspace, source),
            await self.resolved_key(workspace, target),
        )
        edges = await self._graph.get_edges(workspace, [pair])
        if not edges:
            raise NotFound(f"workspace {workspace!r} has no relation between these entities")
        [info] = await self._relations(workspace, edges)
        return info

    async def chunks(self, workspace: str, chunk_ids: Sequence[str]) -> list[SourceText]:
        """The chunks that still exist among the first MAX_SOURCE_CHUNKS ids, in order."""
        records = await self._search.get(
            Collection.CHUNKS, workspace, chunk_ids[:MAX_SOURCE_CHUNKS], whole=False
        )
        return [
            SourceText(
                r.id, r.doc_ids[0] if r.doc_ids else "", str(r.attrs.get("file_path", "")), r.text
            )
            for r in records
        ]

    async def neighbourhood(
        self, workspace: str, name: str, depth: int, max_nodes: int
    ) -> Neighbourhood:
        centre = await self.entity(workspace, name)
        kept = [Reached(centre.node.key, 0)]
        nodes = {centre.node.key: centre.node}
        degrees = {centre.node.key: centre.degree}
        truncated = False
        for hops in range(1, depth + 1):
            frontier = [r.key for r in kept if r.hops == hops - 1]
            around = await self._graph.edges_of(workspace, frontier)
            ring = next_ring(frontier, around, nodes.keys(), hops)
            found = {
                n.key: n for n in await self._graph.get_nodes(workspace, [r.key for r in ring])
            }
            ring = [r for r in ring if r.key in found]  # edges may point at no entity
            degrees.update(await self._graph.degrees(workspace, [r.key for r in ring]))
            ring = ranked(ring, degrees)
            room = max_nodes - len(kept)
            truncated = truncated or len(ring) > room
            kept += ring[:room]
            nodes.update((r.key, found[r.key]) for r in ring[:room])
            if room < len(ring):
                break
        edges = await self._graph.edges_among(workspace, [r.key for r in kept])
        return Neighbourhood(
            nodes=[(EntityInfo(nodes[r.key], degrees[r.key]), r.hops) for r in kept],
            relations=[_relation(e, nodes, degrees) for e in edges],
            truncated=truncated,
        )

    async def summary(self, workspace: str, top: int) -> GraphSummary:
        stats = await self._graph.stats(workspace, top)
        degrees = dict(stats.top)
        nodes = await self._graph.get_nodes(workspace, list(degrees))
        ranked = [EntityInfo(n, degrees[n.key]) for n in nodes]
        return GraphSummary(stats.nodes, stats.edges, ranked)

    async def _relations(self, workspace: str, edges: Sequence[GraphEdge]) -> list[RelationInfo]:
        keys = list(dict.fromkeys(k for e in edges for k in (e.source, e.target)))
        nodes = {n.key: n for n in await self._graph.get_nodes(workspace, keys)}
        degrees = await self._graph.degrees(workspace, keys)
        return [_relation(e, nodes, degrees) for e in edges]


def _relation(
    edge: GraphEdge, nodes: dict[str, GraphNode], degrees: dict[str, int]
) -> RelationInfo:
    def name(key: str) -> str:
        node = nodes.get(key)
        return node.name if node is not None else key

    degree = degrees.get(edge.source, 0) + degrees.get(edge.target, 0)
    return RelationInfo(edge, name(edge.source), name(edge.target), degree)
