"""Stage 2's community step: each workspace's communities re-optimized around the keys a
merge batch touched, from the previous partition, and written to the community store.

The step is the single writer of a workspace's communities (see community_consumer.py), so
it keeps the workspace's weighted graph and partition in memory, read from the stores on the
workspace's first batch: later batches read only the touched entities and relations. The
touched keys are state-based: an entity or relation is what the graph store holds now, and
one that is gone is dropped with its edges, so replays and repeats change nothing.

Up to `exact_max_entities` related entities, every batch that changed the graph rebuilds the
partition from the whole graph (seeded, edges sorted, content ids): exact under the stream,
the same communities whatever the order of the events (DESIGN.md section 8). A larger graph
is re-optimized around the touched keys from the previous partition, which is cheaper but
depends on history: every `check_every` batches it is compared with a seeded rebuild of the
same graph (modularity logged); past `max_drift` the rebuild replaces it, ids carried over.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from opentelemetry import context as otel_context

from ragstream.common.communities import CommunityRecord
from ragstream.common.config_communities import CommunitiesConfig
from ragstream.common.events import MergeKey
from ragstream.common.models import is_relation_key, split_relation_key
from ragstream.common.storage.protocols import CommunityStore, GraphStore
from ragstream.common.telemetry import annotate, own, span
from ragstream.indexer.communities.graph import MIN_WEIGHT, Pair, WeightedGraph, pair
from ragstream.indexer.communities.leiden import LeidenParams
from ragstream.indexer.communities.maintain import rebuild, update
from ragstream.indexer.communities.modularity import modularity
from ragstream.indexer.communities.partition import Community, Partition
from ragstream.indexer.stages.community_write import CommunityWriter, Written

log = logging.getLogger(__name__)


REBUILD_KEY = "\u241e\u241erebuild"
"""The key of a request for a full rebuild (`ragstream communities rebuild`): no entity or
relation key holds two relation marks."""


def leiden_params(cfg: CommunitiesConfig) -> LeidenParams:
    return LeidenParams(max_size=cfg.max_size, resolution=cfg.resolution, seed=cfg.seed)


@dataclass(slots=True)
class WorkspaceState:
    graph: WeightedGraph
    partition: Partition
    batches: int = 0
    """Batches since the last drift check."""
    exact: bool = False
    """The partition is the rebuild of the current graph with content ids."""


async def read_graph(graph: GraphStore, ws: str) -> WeightedGraph:
    """The workspace's whole weighted graph: every node with an edge, then the edges among
    them (two reads, on every graph backend)."""
    stats = await graph.stats(ws, top=max(1, 2 * (await graph.stats(ws, top=0)).nodes))
    edges = await graph.edges_among(ws, [key for key, _ in stats.top])
    return WeightedGraph.of((e.source, e.target, e.weight) for e in edges)


def partition_of(records: Sequence[CommunityRecord]) -> Partition:
    return Partition(
        {r.id: Community(r.id, r.level, r.parent, frozenset(r.members)) for r in records}
    )


class CommunityMaintainer:
    def __init__(
        self,
        graph: GraphStore,
        communities: CommunityStore,
        writer: CommunityWriter,
        cfg: CommunitiesConfig,
    ) -> None:
        self._graph = graph
        self._communities = communities
        self._writer = writer
        self._cfg = cfg
        self.reports_written = 0
        """Reports written anew since start (the others' content was unchanged)."""
        self._params = leiden_params(cfg)
        self._states: dict[str, WorkspaceState] = {}

    def forget(self) -> None:
        """Drops the in-memory state (the partition assignment moved: another consumer may
        have written since); the next batch of each workspace reads it afresh."""
        self._states.clear()

    async def apply_batch(
        self, items: Sequence[MergeKey], contexts: Sequence[otel_context.Context] = ()
    ) -> None:
        by_workspace: dict[str, set[str]] = {}
        for item in items:
            by_workspace.setdefault(item.workspace, set()).add(item.key)
        for ws, keys in by_workspace.items():
            with span("communities", attributes=own(workspace=ws, keys=len(keys))) as current:
                written = await self._maintain(ws, keys)
                self.reports_written += written.reports
                annotate(
                    current, changed=written.changed, removed=written.removed,
                    reports=written.reports,
                )  # fmt: skip

    async def rebuild(self, ws: str) -> Written:
        """A full rebuild of the workspace from the graph store (`communities rebuild`),
        every key of the batch included: the graph is read whole, every report checked."""
        graph = await read_graph(self._graph, ws)
        before = partition_of(await self._communities.list(ws))
        exact = self._exact(graph)
        carried = None if exact else before
        after = await asyncio.to_thread(rebuild, graph, self._params, carried)
        written = await self._writer.write(ws, before, after, graph.nodes())
        self._states[ws] = WorkspaceState(graph, after, exact=exact)
        return written

    def _exact(self, graph: WeightedGraph) -> bool:
        return len(graph.nodes()) <= self._cfg.exact_max_entities

    async def _maintain(self, ws: str, keys: set[str]) -> Written:
        if REBUILD_KEY in keys:
            return await self.rebuild(ws)
        state = self._states.get(ws)
        if state is None:
            stored = await self._communities.list(ws)
            graph = await read_graph(self._graph, ws)
            state = WorkspaceState(graph, partition_of(stored))
            self._states[ws] = state
            touched = keys_entities(keys) if stored else graph.nodes()
            moved = touched
        else:
            moved, touched = await self._apply_changes(ws, state.graph, keys)
        before = state.partition
        after = await self._next(ws, state, moved)
        written = await self._writer.write(ws, before, after, touched)
        state.partition = after
        return written

    async def _next(self, ws: str, state: WorkspaceState, moved: set[str]) -> Partition:
        """The partition after a batch that moved `moved` (none: only descriptions changed,
        the graph is as it was)."""
        if self._exact(state.graph):
            if moved or not state.exact:
                state.exact = True
                return await asyncio.to_thread(rebuild, state.graph, self._params)
            return state.partition
        state.exact = False
        after = state.partition
        if moved:
            after = await asyncio.to_thread(update, after, state.graph, moved, self._params)
        state.batches += 1
        if state.batches >= self._cfg.check_every:
            state.batches = 0
            after = await asyncio.to_thread(self._checked, ws, state.graph, after)
        return after

    async def _apply_changes(
        self, ws: str, graph: WeightedGraph, keys: set[str]
    ) -> tuple[set[str], set[str]]:
        """Reads the touched relations and entities, each present entity with all of its
        relations, and applies them to `graph`. Returns
        the entities to re-optimize around (both ends of every relation added, removed or
        reweighted, every entity gone and its neighbours) and the entities whose reports may
        have to change (those, every touched entity and both ends of every touched
        relation)."""
        pairs = sorted({split_relation_key(k) for k in keys if is_relation_key(k)})
        entities = sorted(k for k in keys if not is_relation_key(k))
        edges = {pair(e.source, e.target): e.weight for e in await self._graph.get_edges(ws, pairs)}
        present = {n.key for n in await self._graph.get_nodes(ws, entities)}
        gone = [key for key in entities if key not in present]
        changed: dict[Pair, float | None] = {pair(*p): edges.get(pair(*p)) for p in pairs}
        # A present entity's relations are read whole: one written before the entity was
        # (another partition's merge) was left out of every earlier read of the graph.
        around = await self._graph.edges_of(ws, sorted(present))
        changed |= {e: None for e in graph.weights if e[0] in present or e[1] in present}
        changed |= {pair(e.source, e.target): e.weight for es in around.values() for e in es}
        gone_set = set(gone)
        moved = {n for e in graph.weights if e[0] in gone_set or e[1] in gone_set for n in e}
        moved |= gone_set
        moved |= {n for e, w in changed.items() if not _same(graph.weights.get(e), w) for n in e}
        graph.apply(changed, gone)
        return moved, moved | keys_entities(keys)

    def _checked(self, ws: str, graph: WeightedGraph, partition: Partition) -> Partition:
        reference = rebuild(graph, self._params, partition)
        ours, theirs = modularity(graph, partition.top()), modularity(graph, reference.top())
        drift = (theirs - ours) / abs(theirs) if theirs else 0.0
        log.info(
            "communities of %s: modularity %.4f, a rebuild's %.4f (drift %.2f%%)",
            ws, ours, theirs, 100 * drift,
        )  # fmt: skip
        if drift > self._cfg.max_drift:
            log.warning("communities of %s drifted past %.2f%%: rebuilt", ws, 100 * drift)
            return reference
        return partition


def _same(old: float | None, new: float | None) -> bool:
    """Whether an edge's weight is unchanged, as `WeightedGraph` stores it."""
    if old is None or new is None:
        return old is new
    return abs(old - max(new, MIN_WEIGHT)) <= 1e-12


def keys_entities(keys: set[str]) -> set[str]:
    """The entity keys among `keys`, and both entities of every relation key."""
    out = {k for k in keys if not is_relation_key(k)}
    for key in keys:
        if is_relation_key(key):
            out.update(split_relation_key(key))
    return out
