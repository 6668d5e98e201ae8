"""Communities kept current by the indexer, end to end on the embedded stores (offline NLP
extractor): stored after each merge batch, shrunk by deletes, and the same communities from a
rebuild whatever order the events came in."""

from __future__ import annotations

import random
from pathlib import Path

from ragstream.cli.communities import request_rebuild
from ragstream.cli.demo_data import CORPUS
from ragstream.common.events import DocumentChange, MergeKey
from ragstream.common.models import (
    Collection,
    GraphEdge,
    GraphNode,
    SearchFilter,
    relation_key,
    split_relation_key,
)
from ragstream.common.registry import open_backends
from ragstream.common.text.analyzer import analyze
from ragstream.indexer.communities.leiden import LeidenParams
from ragstream.indexer.communities.maintain import rebuild
from ragstream.indexer.communities.modularity import modularity
from ragstream.indexer.communities.partition import Partition
from ragstream.indexer.communities.reports import CommunityContent, content_key
from ragstream.indexer.stages.communities import CommunityMaintainer, partition_of, read_graph
from ragstream.indexer.stages.community_reports import ExtractiveReportWriter
from ragstream.indexer.stages.community_write import CommunityWriter
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline

WS = "comm"
REPO = Path(__file__).resolve().parents[2]
PARAMS = LeidenParams()


def change(doc_id: str, version: int, content: str | None) -> DocumentChange:
    if content is None:
        return DocumentChange(WS, doc_id, version, deleted=True)
    return DocumentChange(WS, doc_id, version, False, content, f"{doc_id}.md", {}, 1_700_000_000.0)


def corpus() -> list[DocumentChange]:
    files = sorted(CORPUS.iterdir())
    return [change(f.name, 1, f.read_text(encoding="utf-8")) for f in files]


async def stored(pipeline: Pipeline) -> Partition:
    return partition_of(await pipeline.backends.stores.communities.list(WS))


async def check_reports(pipeline: Pipeline) -> dict[str, str]:
    """Every community has a report written from its current content, resting only on its
    members, and searchable; returns each community's report content key."""
    stores = pipeline.backends.stores
    records = await stores.communities.list(WS)
    keys: dict[str, str] = {}
    for record in records:
        nodes = await stores.graph.get_nodes(WS, list(record.members))
        edges = await stores.graph.edges_among(WS, list(record.members))
        content = CommunityContent.of(record.id, record.level, nodes, edges)
        assert record.report is not None
        assert record.report.content_key == content_key(content)
        for finding in record.report.findings:
            assert set(finding.entities) <= set(record.members)
        keys[record.id] = record.report.content_key
    stored = await stores.search.get(Collection.COMMUNITIES, WS, sorted(keys))
    assert [r.id for r in stored] == sorted(keys)
    return keys


async def check_current(pipeline: Pipeline) -> tuple[Partition, float]:
    """The stored partition covers exactly the graph's related entities, every level splits
    the one above, and its modularity is within 2% of a rebuild's; returns it and that."""
    graph = await read_graph(pipeline.backends.stores.graph, WS)
    partition = await stored(pipeline)
    assert {m for c in partition.level(0) for m in c.members} == graph.nodes()
    assert {m for c in partition.communities.values() for m in c.members} <= graph.nodes()
    for community in partition.communities.values():
        if community.parent:
            assert community.members <= partition.communities[community.parent].members
    ours = modularity(graph, partition.top())
    assert ours >= 0.98 * modularity(graph, rebuild(graph, PARAMS).top())
    return partition, ours


async def test_communities_follow_upserts_and_deletes(tmp_path: Path) -> None:
    events = corpus()
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish(events)
        await pipeline.idle()
        before, _ = await check_current(pipeline)
        assert len(before.level(0)) >= 3
        await check_reports(pipeline)
        top = before.level(0)[0]
        title = (await pipeline.backends.stores.communities.get(WS, [top.id]))[0].report
        assert title is not None
        hits = await pipeline.backends.stores.search.search_terms(
            Collection.COMMUNITIES, WS, analyze(title.title), SearchFilter(), 5
        )
        assert top.id in [h.record.id for h in hits]
        gone = events[0].doc_id
        nodes = await pipeline.backends.stores.graph.get_nodes(WS, sorted(before.top()))
        only_there = {n.key for n in nodes if n.doc_ids == (gone,)}
        assert only_there

        await pipeline.publish([change(gone, 2, None)])
        await pipeline.idle()
        after, _ = await check_current(pipeline)
        await check_reports(pipeline)
    held = {m for c in after.communities.values() for m in c.members}
    assert not held & only_there
    kept = set(before.communities) & set(after.communities)
    assert len(kept) >= len(before.communities) // 2  # ids persist where membership does


async def test_any_order_of_the_events_gives_the_same_communities(tmp_path: Path) -> None:
    """Exact (the default at this size): the stored communities, ids and reports are the
    same whatever the order. The frontier update (exact off) depends on its history: its
    rebuild is the same, and its quality within 2% of the exact run's."""
    events = corpus()
    edited = events[1].content.replace(".", ". Lena Voss reviewed this.", 1)
    stream = [*events, change(events[1].doc_id, 2, edited), change(events[2].doc_id, 2, None)]
    results = []
    for run, (seed, exact) in enumerate(((None, 50_000), (3, 50_000), (5, 0))):
        order = stream[:]
        if seed is not None:  # each document's events stay in order; documents interleave
            rng = random.Random(seed)
            order.sort(key=lambda e: (e.version, rng.random()))
        settings = embedded_settings(tmp_path / str(run), communities={"exact_max_entities": exact})
        async with running_pipeline(settings) as pipeline:
            for start in range(0, len(order), 4):
                await pipeline.publish(order[start : start + 4])
            await pipeline.idle()
            partition, quality = await check_current(pipeline)
            await check_reports(pipeline)  # every report matches its community's members
            graph = await read_graph(pipeline.backends.stores.graph, WS)
            records = await pipeline.backends.stores.communities.list(WS)
            reports = {r.id: r.report for r in records}
        results.append((partition, reports, rebuild(graph, PARAMS), quality))
    (first, first_reports, first_rebuild, first_q) = results[0]
    (second, second_reports, _, _) = results[1]
    assert first.communities == second.communities == first_rebuild.communities
    assert first_reports == second_reports
    (_, _, frontier_rebuild, frontier_q) = results[2]
    assert frontier_rebuild.communities == first_rebuild.communities
    assert abs(first_q - frontier_q) <= 0.02 * first_q


async def test_communities_rebuild_is_applied_by_the_indexer(tmp_path: Path) -> None:
    settings = embedded_settings(tmp_path)
    async with running_pipeline(settings) as pipeline:
        await pipeline.publish(corpus()[:6])
        await pipeline.idle()
        assert await request_rebuild(settings, WS, wait_s=60) == 0
        graph = await read_graph(pipeline.backends.stores.graph, WS)
        assert (await stored(pipeline)).shape() == rebuild(graph, PARAMS).shape()
        assert await request_rebuild(settings, "no such/workspace", wait_s=1) == 2


async def test_a_rebuild_nobody_applies_is_reported_as_queued(tmp_path: Path) -> None:
    assert await request_rebuild(embedded_settings(tmp_path), WS, wait_s=0.3) == 1


async def test_editing_a_paragraph_rewrites_only_the_reports_of_what_changed(
    tmp_path: Path,
) -> None:
    events = corpus()
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        graph = pipeline.backends.stores.graph
        await pipeline.publish(events)
        await pipeline.idle()
        before = await check_reports(pipeline)
        members = {r.id: r.members for r in await pipeline.backends.stores.communities.list(WS)}
        keys = sorted({m for ms in members.values() for m in ms})
        nodes = {n.key: n.description for n in await graph.get_nodes(WS, keys)}
        edges = {e.key: (e.description, e.weight) for e in await graph.edges_among(WS, keys)}
        doc = events[4]
        paragraphs = doc.content.split("\n\n")
        middle = len(paragraphs) // 2
        paragraphs[middle] = paragraphs[middle].replace(" ", " also ", 1)
        await pipeline.publish([change(doc.doc_id, 2, "\n\n".join(paragraphs))])
        await pipeline.idle()
        after = await check_reports(pipeline)
        now = {n.key: n.description for n in await graph.get_nodes(WS, keys)}
        now_edges = {e.key: (e.description, e.weight) for e in await graph.edges_among(WS, keys)}
        regrouped = {
            r.id
            for r in await pipeline.backends.stores.communities.list(WS)
            if members.get(r.id) != r.members
        }
    edited = {k for k in keys if set(nodes[k].split("\n")) != set(now.get(k, "").split("\n"))}
    edited |= {n for k in edges.keys() ^ now_edges.keys() for n in split_relation_key(k)}
    edited |= {
        n for k in edges if now_edges.get(k, edges[k]) != edges[k] for n in split_relation_key(k)
    }
    rewritten = {c for c, key in after.items() if before.get(c) != key}
    assert edited and rewritten
    # a report is rewritten only where the members, a member or a relation among them changed
    assert all(c in regrouped or not edited.isdisjoint(members[c]) for c in rewritten)
    assert len(rewritten) < len(after)  # not every report


def _node(key: str) -> GraphNode:
    return GraphNode(key, key.title(), "person", f"{key} is someone.", ("c1",), ("d1",))


def _edge(a: str, b: str) -> GraphEdge:
    return GraphEdge(a, b, "knows", f"{a} knows {b}.", 1.0, ("c1",), ("d1",))


async def test_a_relation_written_before_its_entity_joins_the_communities_once_the_entity_is(
    tmp_path: Path,
) -> None:
    """Stage 2's keys lie on different partitions, so a relation can be written before an
    entity at one of its ends. Read then, the graph leaves the relation out (the community
    graph's nodes are entities that exist); when the entity's key comes, its relations are
    read again, and the communities are those of the whole graph as it now stands."""
    settings = embedded_settings(tmp_path)
    async with open_backends(settings) as backends:
        stores = backends.stores
        writer = CommunityWriter(
            stores.graph, stores.communities, stores.search, backends.providers.embeddings,
            ExtractiveReportWriter(),
        )  # fmt: skip
        step = CommunityMaintainer(stores.graph, stores.communities, writer, settings.communities)
        await stores.graph.upsert_nodes(WS, [_node("ada"), _node("bob")])
        await stores.graph.upsert_edges(WS, [_edge("ada", "bob"), _edge("ada", "cyd")])
        keys = ("ada", "bob", relation_key("ada", "bob"), relation_key("ada", "cyd"))
        await step.apply_batch([MergeKey(WS, key) for key in keys])
        await stores.graph.upsert_nodes(WS, [_node("cyd")])
        await step.apply_batch([MergeKey(WS, "cyd")])
        graph = await read_graph(stores.graph, WS)
        held = partition_of(await stores.communities.list(WS))
    assert graph.nodes() == {"ada", "bob", "cyd"}
    assert held.communities == rebuild(graph, PARAMS).communities
