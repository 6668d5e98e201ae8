"""Local retrieval reads the found entities' edges in rank order only as far as the ranking
needs: the relations it keeps are those a read of every entity's edges would keep."""

from __future__ import annotations

import asyncio
import random
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.storage.sqlite import Database
from ragstream.common.storage.sqlite.graph import SqliteGraphStore
from ragstream.query.stages.graph import GraphQuery, edges_in_rank_order, rank_edges

KEYS = [f"e{n:02d}" for n in range(40)]


def query(top_k: int, allowed: frozenset[str] | None) -> GraphQuery:
    return GraphQuery("ws", "q", None, top_k, top_k, 0.0, 60, allowed)


async def compare(seed: int, top_k: int, filtered: bool) -> None:
    rng = random.Random(seed)
    pairs = {tuple(sorted(rng.sample(KEYS, 2))) for _ in range(rng.randrange(0, 200))}
    edges = [
        GraphEdge(a, b, "k", "d", float(rng.randrange(1, 4)), ("c",), (rng.choice("xyz"),))
        for a, b in sorted(pairs)
    ]
    found = rng.sample(KEYS, rng.randrange(1, 30))
    allowed = frozenset(rng.sample("xyz", 2)) if filtered else None
    q = query(top_k, allowed)
    with tempfile.TemporaryDirectory() as tmp:
        async with await Database.open(Path(tmp)) as db:
            graph = await SqliteGraphStore.open(db)
            await graph.upsert_nodes("ws", [GraphNode(k, k, "t", "") for k in KEYS])
            await graph.upsert_edges("ws", edges)
            read, _ = await edges_in_rank_order(graph, q, found)
            around = await graph.edges_of("ws", found)
            every = [
                e
                for k in found
                for e in around.get(k, [])
                if allowed is None or allowed & set(e.doc_ids)
            ]
            ends = sorted({k for e in every for k in (e.source, e.target)})
            degrees = await graph.degrees("ws", ends)
    expected = [(e.key, s) for e, s in rank_edges(every, degrees, found)[:top_k]]
    got = [(e.key, s) for e, s in rank_edges(read, degrees, found)[:top_k]]
    assert got == expected


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 60), st.booleans())
def test_reading_edges_in_rank_order_keeps_the_same_relations(
    seed: int, top_k: int, filtered: bool
) -> None:
    asyncio.run(compare(seed, top_k, filtered))


async def test_a_hub_among_the_last_entities_is_not_read(tmp_path: Path) -> None:
    hub = [GraphEdge("h", f"n{i:03d}", "k", "d", 1.0) for i in range(300)]
    first = [GraphEdge("a", f"b{i}", "k", "d", 1.0) for i in range(10)]
    async with await Database.open(tmp_path) as db:
        graph = await SqliteGraphStore.open(db)
        ends = {k for e in hub + first for k in (e.source, e.target)}
        await graph.upsert_nodes("ws", [GraphNode(k, k, "t", "") for k in ends])
        await graph.upsert_edges("ws", hub + first)
        found = ["a", *(f"x{i}" for i in range(20)), "h"]
        edges, read = await edges_in_rank_order(graph, query(10, None), found)
    assert read == 8
    assert {e.source for e in edges} == {"a"}
