"""The GraphStore contract: every backend's test class inherits this and provides `store`.

A subclass defines a `store` fixture yielding a store it can write to. Each test works in
workspaces of its own (random names), so a backend whose store outlives one test (a live
cluster) runs the suite without cleaning up between tests. Only the Protocol API is used.
"""

from __future__ import annotations

import uuid

import pytest

from ragstream.common.models import GraphEdge, GraphNode, GraphStats
from ragstream.common.storage.protocols import GraphStore

TRICKY_NAMES = (
    'He said "hi"',
    "back\\slash\\",
    "line\nbreak\r\nend",
    "tab\tand\x00nul\x01ctl",
    'x"); DROP SPACE ragstream; ("',
    "x' OR '1'='1",
    '\\"',
    "\\u0041 \\x41 \\101 \\9 \\N",
    "$-.vid | GROUP BY $-.vid YIELD 1",
    "# not a comment // nor this /* nor */",
    "北京大学 — Ünïcödé",
    "emoji 🧪 and \u2028 separator",
    "",
)
"""Keys and names that would break or alter a statement if quoted naively."""


def node(
    key: str,
    *,
    name: str | None = None,
    type: str = "concept",
    description: str | None = None,
    source_ids: tuple[str, ...] = ("chunk-1",),
) -> GraphNode:
    return GraphNode(
        key=key,
        name=key.title() if name is None else name,
        type=type,
        description=f"about {key}" if description is None else description,
        source_ids=source_ids,
        doc_ids=("doc-1",),
    )


def edge(
    source: str,
    target: str,
    *,
    keywords: str = "related",
    description: str | None = None,
    weight: float = 1.0,
    source_ids: tuple[str, ...] = ("chunk-1",),
    doc_ids: tuple[str, ...] = ("doc-1",),
) -> GraphEdge:
    return GraphEdge(
        source=source,
        target=target,
        keywords=keywords,
        description=f"{source} and {target}" if description is None else description,
        weight=weight,
        source_ids=source_ids,
        doc_ids=doc_ids,
    )


def canonical_edge(a: str, b: str, text: str) -> GraphEdge:
    """An edge with `text` as keywords and description, stored orientation."""
    first, second = sorted((a, b))
    return edge(first, second, keywords=text, description=text)


def pairs(edges: list[GraphEdge]) -> list[tuple[str, str]]:
    """The edges' endpoint pairs, in the order given."""
    return [(e.source, e.target) for e in edges]


def sorted_pairs(edges: list[GraphEdge]) -> list[tuple[str, str]]:
    """The edges' endpoint pairs, sorted: edges_of promises no order."""
    return sorted(pairs(edges))


class GraphStoreContract:
    @pytest.fixture
    def ws(self) -> str:
        return f"ws-{uuid.uuid4().hex[:12]}"

    @pytest.fixture
    def other_ws(self) -> str:
        return f"ws-{uuid.uuid4().hex[:12]}"

    # -- nodes ----------------------------------------------------------------------------

    async def test_get_nodes_returns_every_field_as_written(
        self, store: GraphStore, ws: str
    ) -> None:
        written = GraphNode(
            key="北京大学",
            name="Peking University",
            type="organization",
            description="A university in Beijing.\nFounded 1898.",
            source_ids=("chunk-a", "chunk-b"),
            doc_ids=("doc/1", "doc 2"),
        )
        await store.upsert_nodes(ws, [written])
        assert await store.get_nodes(ws, ["北京大学"]) == [written]

    async def test_upsert_replaces_a_node_by_key(self, store: GraphStore, ws: str) -> None:
        await store.upsert_nodes(ws, [node("alpha", description="old", source_ids=("c1", "c2"))])
        replacement = node("alpha", name="Alpha", type="", description="new", source_ids=())
        await store.upsert_nodes(ws, [replacement])
        assert await store.get_nodes(ws, ["alpha"]) == [replacement]

    async def test_get_nodes_keeps_the_order_of_keys_and_skips_unknown_ones(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_nodes(ws, [node("a"), node("b"), node("c")])
        got = await store.get_nodes(ws, ["c", "missing", "a", "c"])
        assert [n.key for n in got] == ["c", "a"]
        assert await store.get_nodes(ws, []) == []
        assert await store.get_nodes(ws, ["missing"]) == []

    async def test_the_last_of_duplicate_nodes_in_one_batch_wins(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_nodes(ws, [node("a", description="first"), node("a", description="2")])
        [got] = await store.get_nodes(ws, ["a"])
        assert got.description == "2"

    # -- edges ----------------------------------------------------------------------------

    async def test_edges_are_undirected_and_stored_sorted(self, store: GraphStore, ws: str) -> None:
        await store.upsert_edges(ws, [edge("zeta", "alpha", description="d", weight=2.5)])
        expected = edge("alpha", "zeta", description="d", weight=2.5)
        assert await store.get_edges(ws, [("alpha", "zeta")]) == [expected]
        assert await store.get_edges(ws, [("zeta", "alpha")]) == [expected]

    async def test_upserting_the_reversed_pair_replaces_the_edge(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_edges(ws, [edge("a", "b", description="first", weight=1.0)])
        await store.upsert_edges(ws, [edge("b", "a", description="second", weight=0.25)])
        [got] = await store.get_edges(ws, [("a", "b")])
        assert (got.source, got.target, got.description, got.weight) == ("a", "b", "second", 0.25)
        assert await store.degrees(ws, ["a", "b"]) == {"a": 1, "b": 1}

    async def test_get_edges_keeps_the_order_of_pairs_and_skips_unknown_ones(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_edges(ws, [edge("a", "b"), edge("b", "c"), edge("a", "c")])
        got = await store.get_edges(ws, [("c", "b"), ("a", "z"), ("a", "b"), ("b", "c")])
        assert pairs(got) == [("b", "c"), ("a", "b")]
        assert await store.get_edges(ws, []) == []

    async def test_weights_and_lists_survive_exactly(self, store: GraphStore, ws: str) -> None:
        weights = [0.1, 1e-7, 12345.678901234, -3.5, 0.0, 1e20]
        edges = [
            edge("hub", f"n{i}", weight=w, source_ids=(f"c{i}", "c-x"), doc_ids=())
            for i, w in enumerate(weights)
        ]
        await store.upsert_edges(ws, edges)
        got = await store.get_edges(ws, [(e.source, e.target) for e in edges])
        assert got == edges

    async def test_endpoints_need_not_exist(self, store: GraphStore, ws: str) -> None:
        await store.upsert_edges(ws, [edge("ghost-a", "ghost-b")])
        assert await store.get_nodes(ws, ["ghost-a", "ghost-b"]) == []
        assert sorted_pairs((await store.edges_of(ws, ["ghost-a"]))["ghost-a"]) == [
            ("ghost-a", "ghost-b")
        ]

    async def test_delete_edges_takes_either_order_and_ignores_unknown_pairs(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_edges(ws, [edge("a", "b"), edge("b", "c")])
        await store.delete_edges(ws, [("b", "a"), ("x", "y")])
        await store.delete_edges(ws, [])
        assert pairs(await store.get_edges(ws, [("a", "b"), ("b", "c")])) == [("b", "c")]
        assert await store.degrees(ws, ["a", "b"]) == {"a": 0, "b": 1}

    # -- neighbourhoods -------------------------------------------------------------------

    async def test_edges_of_many_keys_at_once(self, store: GraphStore, ws: str) -> None:
        await store.upsert_edges(
            ws, [edge("a", "b"), edge("c", "a"), edge("b", "c"), edge("d", "e"), edge("a", "a")]
        )
        got = await store.edges_of(ws, ["a", "b", "unknown"])
        assert set(got) == {"a", "b", "unknown"}
        assert sorted_pairs(got["a"]) == [("a", "a"), ("a", "b"), ("a", "c")]
        assert sorted_pairs(got["b"]) == [("a", "b"), ("b", "c")]
        assert got["unknown"] == []
        assert await store.edges_of(ws, []) == {}

    async def test_degrees_of_many_keys_at_once(self, store: GraphStore, ws: str) -> None:
        await store.upsert_edges(
            ws, [edge("a", "b"), edge("c", "a"), edge("b", "c"), edge("a", "a")]
        )
        await store.upsert_nodes(ws, [node("lonely")])
        got = await store.degrees(ws, ["a", "b", "lonely", "unknown"])
        assert got == {"a": 3, "b": 2, "lonely": 0, "unknown": 0}
        assert await store.degrees(ws, []) == {}

    async def test_a_large_neighbourhood_batch(self, store: GraphStore, ws: str) -> None:
        keys = [f"entity-{i:03d}" for i in range(200)]
        await store.upsert_nodes(ws, [node(k) for k in keys])
        await store.upsert_edges(ws, [edge(keys[i], keys[(i + 1) % 200]) for i in range(200)])
        got = await store.edges_of(ws, keys)
        assert all(len(got[k]) == 2 for k in keys)
        assert set((await store.degrees(ws, keys)).values()) == {2}

    async def test_edges_among_keys_leave_out_edges_that_leave_the_set(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_edges(
            ws,
            [edge("b", "a"), edge("a", "c"), edge("c", "d"), edge("b", "b"), edge("x", "y")],
        )
        got = await store.edges_among(ws, ["c", "a", "b", "unknown", "a"])
        assert pairs(got) == [("a", "b"), ("a", "c"), ("b", "b")]
        assert got[0] == edge("a", "b", description="b and a")
        assert await store.edges_among(ws, ["a"]) == []
        assert await store.edges_among(ws, []) == []

    async def test_edges_among_a_large_set(self, store: GraphStore, ws: str) -> None:
        keys = [f"entity-{i:04d}" for i in range(1500)]
        ring = [edge(keys[i], keys[(i + 1) % 1500]) for i in range(1500)]
        await store.upsert_edges(ws, ring)
        got = await store.edges_among(ws, keys[::-1])
        assert pairs(got) == sorted(tuple(sorted((e.source, e.target))) for e in ring)
        assert len(await store.edges_among(ws, keys[:750])) == 749

    async def test_stats_count_the_graph_and_rank_nodes_by_degree(
        self, store: GraphStore, ws: str
    ) -> None:
        assert await store.stats(ws, 5) == GraphStats(0, 0, ())
        await store.upsert_nodes(ws, [node(k) for k in ("hub", "b", "a", "lonely", "self")])
        await store.upsert_edges(
            ws,
            [
                edge("hub", "a"),
                edge("hub", "b"),
                edge("hub", "ghost"),  # a dangling edge counts, its missing end is no node
                edge("a", "b"),
                edge("self", "self"),
            ],
        )
        assert await store.stats(ws, 10) == GraphStats(
            5, 5, (("hub", 3), ("a", 2), ("b", 2), ("self", 1))
        )
        assert (await store.stats(ws, 2)).top == (("hub", 3), ("a", 2))
        assert (await store.stats(ws, 0)).top == ()

    async def test_stats_see_one_workspace_only(
        self, store: GraphStore, ws: str, other_ws: str
    ) -> None:
        await store.upsert_nodes(ws, [node("a"), node("b")])
        await store.upsert_edges(ws, [edge("a", "b")])
        await store.upsert_nodes(other_ws, [node("a"), node("c"), node("d")])
        await store.upsert_edges(other_ws, [edge("a", "c"), edge("a", "d"), edge("c", "d")])
        assert await store.stats(ws, 10) == GraphStats(2, 1, (("a", 1), ("b", 1)))
        await store.delete_nodes(ws, ["a"])
        assert await store.stats(ws, 10) == GraphStats(1, 0, ())
        assert (await store.stats(other_ws, 1)) == GraphStats(3, 3, (("a", 2),))

    # -- deletes --------------------------------------------------------------------------

    async def test_delete_nodes_removes_their_edges_in_both_directions(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_nodes(ws, [node("a"), node("b"), node("m"), node("z")])
        await store.upsert_edges(ws, [edge("a", "m"), edge("m", "z"), edge("a", "z")])
        await store.delete_nodes(ws, ["m", "unknown"])
        assert [n.key for n in await store.get_nodes(ws, ["a", "b", "m", "z"])] == ["a", "b", "z"]
        assert pairs(await store.get_edges(ws, [("a", "m"), ("m", "z"), ("a", "z")])) == [
            ("a", "z")
        ]
        assert await store.degrees(ws, ["a", "m", "z"]) == {"a": 1, "m": 0, "z": 1}
        await store.delete_nodes(ws, [])

    async def test_delete_nodes_removes_edges_of_keys_without_a_node(
        self, store: GraphStore, ws: str
    ) -> None:
        await store.upsert_edges(ws, [edge("ghost", "other")])
        await store.delete_nodes(ws, ["ghost"])
        assert await store.get_edges(ws, [("ghost", "other")]) == []

    # -- isolation and hostile text -------------------------------------------------------

    async def test_workspaces_are_isolated(self, store: GraphStore, ws: str, other_ws: str) -> None:
        await store.upsert_nodes(ws, [node("a", description="mine")])
        await store.upsert_nodes(other_ws, [node("a", description="theirs"), node("b")])
        await store.upsert_edges(ws, [edge("a", "b")])
        await store.upsert_edges(other_ws, [edge("a", "c"), edge("a", "d")])
        assert [n.description for n in await store.get_nodes(ws, ["a", "b"])] == ["mine"]
        assert await store.degrees(ws, ["a"]) == {"a": 1}
        assert sorted_pairs((await store.edges_of(other_ws, ["a"]))["a"]) == [
            ("a", "c"),
            ("a", "d"),
        ]
        await store.delete_nodes(ws, ["a"])
        await store.delete_edges(ws, [("a", "c")])
        assert [n.description for n in await store.get_nodes(other_ws, ["a"])] == ["theirs"]
        assert await store.degrees(other_ws, ["a"]) == {"a": 2}

    async def test_hostile_text_round_trips_unchanged(self, store: GraphStore, ws: str) -> None:
        nodes = [
            GraphNode(
                key=name,
                name=name,
                type=name,
                description=name * 2,
                source_ids=(name,),
                doc_ids=(name, "plain"),
            )
            for name in TRICKY_NAMES
        ]
        await store.upsert_nodes(ws, nodes)
        assert await store.get_nodes(ws, list(TRICKY_NAMES)) == nodes
        edges = [canonical_edge(name, "anchor", name) for name in TRICKY_NAMES]
        await store.upsert_edges(ws, edges)
        got = await store.edges_of(ws, ["anchor"])
        assert sorted_pairs(got["anchor"]) == sorted_pairs(edges)
        assert await store.get_edges(ws, pairs(edges)) == edges
        among = await store.edges_among(ws, ["anchor", *TRICKY_NAMES])
        assert among == sorted(edges, key=lambda e: (e.source, e.target))
        first = tuple((name, 1) for name in sorted(TRICKY_NAMES)[:4])
        assert await store.stats(ws, 4) == GraphStats(len(nodes), len(edges), first)
        await store.delete_nodes(ws, list(TRICKY_NAMES))
        assert await store.get_nodes(ws, list(TRICKY_NAMES)) == []
        assert await store.degrees(ws, ["anchor"]) == {"anchor": 0}
