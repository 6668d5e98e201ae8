"""The embedded graph store: the shared contract, plus what only this backend promises."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import get_args

import pytest

from ragstream.common.config_storage import StorageConfig
from ragstream.common.models import GraphEdge
from ragstream.common.registry import GRAPH_BACKENDS
from ragstream.common.storage.protocols import GraphStore
from ragstream.common.storage.sqlite import Database
from ragstream.common.storage.sqlite.graph import SqliteGraphStore
from tests.contract.graph_store_contract import GraphStoreContract, edge, node


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(tmp_path)
    yield database
    await database.close()


class TestSqliteGraphStore(GraphStoreContract):
    @pytest.fixture
    async def store(self, db: Database) -> GraphStore:
        return await SqliteGraphStore.open(db)


async def test_the_graph_survives_a_reopen(tmp_path: Path) -> None:
    async with await Database.open(tmp_path) as first:
        store = await SqliteGraphStore.open(first)
        await store.upsert_nodes("ws", [node("a")])
        await store.upsert_edges("ws", [edge("b", "a")])
    async with await Database.open(tmp_path) as second:
        store = await SqliteGraphStore.open(second)
        assert [n.key for n in await store.get_nodes("ws", ["a"])] == ["a"]
        assert await store.degrees("ws", ["a", "b"]) == {"a": 1, "b": 1}


def _ring(size: int, chords: int) -> list[GraphEdge]:
    """`size` nodes on a ring, each also linked to `chords` nodes further on."""
    return [
        edge(f"n{i:05d}", f"n{(i + step) % size:05d}")
        for i in range(size)
        for step in range(1, chords + 2)
    ]


async def test_batch_reads_are_fast_on_10k_nodes_and_50k_edges(db: Database) -> None:
    store = await SqliteGraphStore.open(db)
    keys = [f"n{i:05d}" for i in range(10_000)]
    started = time.perf_counter()
    await store.upsert_nodes("ws", [node(k) for k in keys])
    await store.upsert_edges("ws", _ring(10_000, 4))
    written = time.perf_counter() - started

    batch = keys[::50]  # 200 keys
    started = time.perf_counter()
    neighbourhoods = await store.edges_of("ws", batch)
    degrees = await store.degrees("ws", batch)
    read = time.perf_counter() - started

    assert all(len(neighbourhoods[k]) == 10 for k in batch)
    assert set(degrees.values()) == {10}
    # Generous bounds (a 2-core CI machine): the point is index lookups, not table scans.
    assert written < 20.0, f"writing 10k nodes and 50k edges took {written:.1f}s"
    assert read < 1.0, f"edges_of + degrees for 200 keys took {read:.2f}s"


def test_every_configurable_graph_backend_has_a_factory() -> None:
    choices = set(get_args(StorageConfig.model_fields["graph"].annotation))
    assert choices == set(GRAPH_BACKENDS) == {"sqlite", "nebula"}
