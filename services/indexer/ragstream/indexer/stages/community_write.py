"""The community step's writes: the communities that changed, each with a report that
matches its current content, to the community store, and the reports to the search store's
`communities` collection (BM25 + dense, like every other collection).

A community is re-reported only when its content key (communities/reports.py) differs from
its stored report's: a membership change or a member's new description. Reports are
written concurrently; a report the LLM gets wrong falls back to the extractive one, logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ragstream.common.communities import CommunityRecord, Report
from ragstream.common.models import Collection, GraphEdge, GraphNode, SearchRecord
from ragstream.common.providers.embedding import Embedder
from ragstream.common.storage.protocols import CommunityStore, GraphStore, SearchStore
from ragstream.common.telemetry import own, span
from ragstream.indexer.communities.partition import Community, Partition
from ragstream.indexer.communities.reports import (
    CommunityContent,
    content_key,
    extractive_report,
    report_record,
)
from ragstream.indexer.stages.community_reports import ReportFormatError, ReportWriter

log = logging.getLogger(__name__)
REPORT_CONCURRENCY = 16


@dataclass(frozen=True, slots=True)
class Written:
    changed: int
    """Communities written (new, changed, or re-reported)."""
    removed: int
    reports: int
    """Reports written anew (the others' content was unchanged)."""


class CommunityWriter:
    def __init__(
        self,
        graph: GraphStore,
        communities: CommunityStore,
        search: SearchStore,
        embedder: Embedder,
        reports: ReportWriter,
    ) -> None:
        self._graph = graph
        self._communities = communities
        self._search = search
        self._embedder = embedder
        self._reports = reports
        self._slots = asyncio.Semaphore(REPORT_CONCURRENCY)

    async def write(
        self, ws: str, before: Partition, after: Partition, touched: set[str]
    ) -> Written:
        """`touched`: entities whose description may have changed (the batch's)."""
        gone = sorted(set(before.communities) - set(after.communities))
        chosen = [
            c
            for c in sorted(after.communities.values(), key=lambda c: c.id)
            if before.communities.get(c.id) != c or not c.members.isdisjoint(touched)
        ]
        # The reports' whole cost (reading their content, writing, embedding and storing
        # them) in one span, apart from the partition's upkeep.
        with span("community_reports", attributes=own(workspace=ws, communities=len(chosen))):
            upserts, records, fresh = await self._reported(ws, chosen)
            await self._communities.apply(ws, upserts, gone)
            await self._search.delete(Collection.COMMUNITIES, ws, gone)
            await self._search.upsert(Collection.COMMUNITIES, records)
        return Written(len(upserts), len(gone), fresh)

    async def _reported(
        self, ws: str, chosen: list[Community]
    ) -> tuple[list[CommunityRecord], list[SearchRecord], int]:
        """The chosen communities' records whose report or members changed, their reports'
        search records (embedded), and how many reports were written anew."""
        stored = {r.id: r for r in await self._communities.get(ws, [c.id for c in chosen])}
        contents = await self._contents(ws, chosen)
        reports = await asyncio.gather(*(self._report(contents[c.id], stored) for c in chosen))
        upserts, records, fresh = [], [], 0
        for community, (report, new) in zip(chosen, reports, strict=True):
            record = CommunityRecord(
                ws, community.id, community.level, community.parent,
                tuple(sorted(community.members)), report,
            )  # fmt: skip
            if record != stored.get(community.id):
                upserts.append(record)
                records.append(report_record(ws, contents[community.id], report, record.parent))
            fresh += new
        return upserts, await self._embedded(records), fresh

    async def _report(
        self, content: CommunityContent, stored: dict[str, CommunityRecord]
    ) -> tuple[Report, bool]:
        """The stored report when it matches the content, else a new one (and True)."""
        old = stored.get(content.id)
        report = old.report if old is not None else None
        if report is not None and report.content_key == content_key(content):
            return report, False
        async with self._slots:
            try:
                return await self._reports.write(content), True
            except ReportFormatError as error:
                log.warning("community %s: %s; the extractive report instead", content.id, error)
                return extractive_report(content), True

    async def _contents(self, ws: str, chosen: Sequence[Community]) -> dict[str, CommunityContent]:
        """Each community's members and inner relations, in one read of each for all."""
        keys = sorted({m for c in chosen for m in c.members})
        nodes = {n.key: n for n in await self._graph.get_nodes(ws, keys)}
        edges = await self._graph.edges_among(ws, keys)
        inner: defaultdict[str, list[GraphEdge]] = defaultdict(list)
        for level in {c.level for c in chosen}:
            owner = {m: c.id for c in chosen if c.level == level for m in c.members}
            for edge in edges:
                place = owner.get(edge.source)
                if place is not None and owner.get(edge.target) == place:
                    inner[place].append(edge)
        return {
            c.id: CommunityContent.of(c.id, c.level, _present(nodes, c.members), inner[c.id])
            for c in chosen
        }

    async def _embedded(self, records: list[SearchRecord]) -> list[SearchRecord]:
        if not records:
            return []
        vectors = await self._embedder.embed([r.text for r in records])
        return [replace(r, vector=v) for r, v in zip(records, vectors, strict=True)]


def _present(nodes: dict[str, GraphNode], members: frozenset[str]) -> list[GraphNode]:
    return [nodes[m] for m in sorted(members) if m in nodes]
