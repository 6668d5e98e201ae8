"""Neighbourhoods: the ring order (pure), and the capped walk over the embedded stores."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragstream.common.config import EmbeddingConfig, QueryDefaults
from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.providers.embedding import build_embedder
from ragstream.common.storage.sqlite import Database, open_embedded_stores
from ragstream.common.storage.sqlite.graph import SqliteGraphStore
from ragstream.query.graph_api import GraphReader, NotFound
from ragstream.query.neighbourhood import Reached, next_ring, ranked


def edge(a: str, b: str, weight: float = 1.0) -> GraphEdge:
    first, second = sorted((a, b))
    return GraphEdge(first, second, "k", f"{a}-{b}", weight)


def test_a_ring_keeps_the_heaviest_joining_relation_and_skips_known_keys() -> None:
    edges = {"c": [edge("c", "x", 1.0), edge("c", "y", 3.0)], "d": [edge("d", "x", 2.0)]}
    ring = next_ring(["c", "d"], edges, {"c", "d", "y"}, hops=1)
    assert ring == [Reached("x", 1, 2.0)]
    both = next_ring(["c", "d"], edges, {"c", "d"}, hops=2)
    assert [r.key for r in ranked(both, {})] == ["y", "x"]


def test_ties_go_to_the_better_connected_entity_then_the_key() -> None:
    ring = [Reached("a", 1, 1.0), Reached("b", 1, 1.0), Reached("c", 1, 1.0), Reached("d", 1, 2.0)]
    order = ranked(ring, {"a": 1, "b": 5, "c": 5})
    assert [r.key for r in order] == ["d", "b", "c", "a"]


# centre - a (w3) - a2 ; centre - b (w2) - b2 ; centre - c (w1) ; centre - ghost (no node)
# a - b ; a2 - b2 (an edge between two second-ring entities)
EDGES = [
    edge("centre", "a", 3.0),
    edge("centre", "b", 2.0),
    edge("centre", "c", 1.0),
    edge("centre", "ghost", 9.0),
    edge("a", "a2"),
    edge("b", "b2"),
    edge("a", "b"),
    edge("a2", "b2"),
]


@pytest.fixture
async def reader(tmp_path: Path) -> AsyncIterator[GraphReader]:
    async with await Database.open(tmp_path) as db:
        graph = await SqliteGraphStore.open(db)
        keys = ["centre", "a", "b", "c", "a2", "b2"]
        await graph.upsert_nodes("ws", [GraphNode(k, k.upper(), "t", f"about {k}") for k in keys])
        await graph.upsert_edges("ws", EDGES)
        search = (await open_embedded_stores(db)).search
        embedder = build_embedder(EmbeddingConfig(provider="hash", dimensions=16))
        yield GraphReader(search, graph, embedder, QueryDefaults())


async def test_one_hop_comes_nearest_first_without_dangling_ends(reader: GraphReader) -> None:
    found = await reader.neighbourhood("ws", "CENTRE", depth=1, max_nodes=50)
    assert [(e.node.key, hops) for e, hops in found.nodes] == [
        ("centre", 0),
        ("a", 1),
        ("b", 1),
        ("c", 1),
    ]
    assert not found.truncated
    pairs = [(r.edge.source, r.edge.target) for r in found.relations]
    assert pairs == [("a", "b"), ("a", "centre"), ("b", "centre"), ("c", "centre")]
    assert found.nodes[0][0].degree == 4  # the dangling relation counts in the degree


async def test_two_hops_capped_and_the_edges_among_what_was_kept(reader: GraphReader) -> None:
    full = await reader.neighbourhood("ws", "centre", depth=2, max_nodes=50)
    assert [(e.node.key, hops) for e, hops in full.nodes][4:] == [("a2", 2), ("b2", 2)]
    assert ("a2", "b2") in [(r.edge.source, r.edge.target) for r in full.relations]
    capped = await reader.neighbourhood("ws", "centre", depth=2, max_nodes=5)
    assert [e.node.key for e, _ in capped.nodes] == ["centre", "a", "b", "c", "a2"]
    assert capped.truncated
    assert all(r.edge.target != "b2" for r in capped.relations)
    one = await reader.neighbourhood("ws", "centre", depth=2, max_nodes=1)
    assert [e.node.key for e, _ in one.nodes] == ["centre"] and one.truncated
    assert one.relations == []


async def test_unknown_entities_and_relations_are_not_found(reader: GraphReader) -> None:
    with pytest.raises(NotFound):
        await reader.neighbourhood("ws", "nobody", depth=1, max_nodes=5)
    with pytest.raises(NotFound):
        await reader.relation("ws", "a", "c")
    with pytest.raises(NotFound):
        await reader.entity("other-ws", "centre")
    relation = await reader.relation("ws", "B", "a")
    assert (relation.source_name, relation.target_name, relation.degree) == ("A", "B", 3 + 3)
