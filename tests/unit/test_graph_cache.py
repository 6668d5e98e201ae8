"""The embedded graph store's read cache: answers decoded once per generation of the graph.

Two stores on one database file stand for two processes sharing a data directory (the
indexer and the query service apart): a write through either is seen by the other's next
read, and until a write the reads come from the cache (shown by changing a row behind the
stores' backs, which moves no generation)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.graph import SqliteGraphStore

WS = "ws"


def node(key: str, description: str = "d") -> GraphNode:
    return GraphNode(key, key.title(), "person", description, ("c1",), ("doc1",))


def edge(a: str, b: str, description: str = "d") -> GraphEdge:
    return GraphEdge(a, b, "k", description, 1.0, ("c1",), ("doc1",))


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[tuple[SqliteGraphStore, SqliteGraphStore]]:
    first, second = await Database.open(tmp_path), await Database.open(tmp_path)
    try:
        reader = await SqliteGraphStore.open(first)
        writer = await SqliteGraphStore.open(second)
        await writer.upsert_nodes(WS, [node("a"), node("b"), node("c")])
        await writer.upsert_edges(WS, [edge("a", "b"), edge("b", "c")])
        yield reader, writer
    finally:
        await first.close()
        await second.close()


async def change_behind_the_stores(db: Database, sql: str) -> None:
    """A change that moves no generation: only a cached answer can hide it."""
    await db.write(lambda conn: conn.execute(sql))


Answers = tuple[list[GraphNode], dict[str, list[GraphEdge]], dict[str, int], list[GraphEdge]]


async def read_everything(store: SqliteGraphStore) -> Answers:
    return (
        await store.get_nodes(WS, ["c", "a", "x", "a"]),
        await store.edges_of(WS, ["b", "x", "a"]),
        await store.degrees(WS, ["b", "x"]),
        await store.get_edges(WS, [("c", "b"), ("a", "c"), ("a", "b")]),
    )


async def test_cached_answers_equal_the_uncached_ones(
    stores: tuple[SqliteGraphStore, SqliteGraphStore],
) -> None:
    reader, writer = stores
    first = await read_everything(reader)  # fills the reader's cache
    assert first == await read_everything(reader) == await read_everything(writer)
    nodes, around, degrees, pairs = first
    assert nodes == [node("c"), node("a")]
    assert around == {"b": [edge("a", "b"), edge("b", "c")], "x": [], "a": [edge("a", "b")]}
    assert degrees == {"b": 2, "x": 0}
    assert pairs == [edge("b", "c"), edge("a", "b")]


async def test_reads_come_from_the_cache_until_the_graph_changes(
    stores: tuple[SqliteGraphStore, SqliteGraphStore], tmp_path: Path
) -> None:
    reader, writer = stores
    before = await read_everything(reader)
    db = await Database.open(tmp_path)
    try:
        await change_behind_the_stores(db, "UPDATE graph_nodes SET description = 'hidden'")
        await change_behind_the_stores(db, "UPDATE graph_edges SET description = 'hidden'")
    finally:
        await db.close()
    assert await read_everything(reader) == before
    # Any write moves the workspace's generation on: every answer is read again.
    await writer.upsert_nodes(WS, [node("d")])
    nodes, around, _, pairs = await read_everything(reader)
    assert [n.description for n in nodes] == ["hidden", "hidden"]
    assert {e.description for edges in around.values() for e in edges} == {"hidden"}
    assert [e.description for e in pairs] == ["hidden", "hidden"]


async def test_another_stores_writes_are_read_at_once(
    stores: tuple[SqliteGraphStore, SqliteGraphStore],
) -> None:
    reader, writer = stores
    await read_everything(reader)
    await writer.upsert_edges(WS, [edge("a", "c", "new")])
    await writer.upsert_nodes(WS, [node("x", "now here")])
    nodes, around, degrees, pairs = await read_everything(reader)
    assert nodes == [node("c"), node("a"), node("x", "now here")]
    assert around["a"] == [edge("a", "b"), edge("a", "c", "new")]
    assert pairs == [edge("b", "c"), edge("a", "c", "new"), edge("a", "b")]
    await writer.delete_nodes(WS, ["b"])  # and its edges
    nodes, around, degrees, pairs = await read_everything(reader)
    assert around == {"b": [], "x": [], "a": [edge("a", "c", "new")]}
    assert degrees == {"b": 0, "x": 0}
    await writer.delete_edges(WS, [("c", "a")])
    assert await reader.edges_of(WS, ["a", "c"]) == {"a": [], "c": []}


async def test_a_workspace_s_writes_leave_another_workspace_s_cache(
    stores: tuple[SqliteGraphStore, SqliteGraphStore],
) -> None:
    reader, writer = stores
    await writer.upsert_nodes("other", [node("a", "elsewhere")])
    assert await reader.get_nodes("other", ["a"]) == [node("a", "elsewhere")]
    await writer.upsert_nodes(WS, [node("a", "changed")])
    assert await reader.get_nodes(WS, ["a"]) == [node("a", "changed")]
    assert await reader.get_nodes("other", ["a"]) == [node("a", "elsewhere")]
