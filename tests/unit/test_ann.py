"""The approximate vector index (storage/sqlite/ann.py), alone and inside the embedded store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragstream.common.models import Collection, SearchFilter
from ragstream.common.storage.sqlite import Database, SqliteSearchStore, ann
from ragstream.common.storage.sqlite.ann import ApproximateIndex
from ragstream.common.storage.sqlite.dense import DenseIndex, DimensionMismatchError
from tests.contract.search_store_contract import NO_FILTER, WS, ids, record

DIM = 32


def clustered(count: int, seed: int = 0) -> np.ndarray:
    """Unit vectors around 50 centres, as embeddings of a corpus cluster by topic."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((50, DIM))
    rows = centres[rng.integers(0, 50, count)] + 0.4 * rng.standard_normal((count, DIM))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def exact(matrix: np.ndarray, pks: np.ndarray) -> DenseIndex:
    return DenseIndex(DIM, pks, matrix, 0)


def test_recall_at_50_against_exact_search_is_at_least_0_99() -> None:
    matrix, pks = clustered(20_000), np.arange(20_000, dtype=np.int64) * 3 + 1
    approximate, reference = ApproximateIndex.build(DIM, pks, matrix), exact(matrix, pks)
    queries = clustered(100, seed=1)
    found = [
        len(
            {p for p, _ in approximate.search(q, None, 50, -1.0)}
            & {p for p, _ in reference.search(q, None, 50, -1.0)}
        )
        for q in queries
    ]
    assert sum(found) / (50 * len(queries)) >= 0.99


def test_a_filter_the_probed_lists_cannot_fill_is_answered_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ann, "PROBES", 1)  # one list scored: most allowed vectors unseen
    matrix, pks = clustered(4_000), np.arange(4_000, dtype=np.int64)
    approximate, reference = ApproximateIndex.build(DIM, pks, matrix), exact(matrix, pks)
    allowed = pks[::7]
    for query in clustered(20, seed=2):
        got = approximate.search(query, allowed, 50, -1.0)
        want = reference.search(query, allowed, 50, -1.0)
        # The same results, by score: fp16 storage may swap two of nearly equal score.
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=2e-3)
        assert len({p for p, _ in got} & {p for p, _ in want}) >= 48
        assert {p for p, _ in got} <= set(allowed.tolist())


def test_a_filter_allowing_fewer_than_the_limit_returns_all_it_allows() -> None:
    matrix, pks = clustered(3_000), np.arange(3_000, dtype=np.int64)
    approximate = ApproximateIndex.build(DIM, pks, matrix)
    allowed = np.array([5, 900, 2_999, 123_456], dtype=np.int64)  # one pk not held
    hits = approximate.search(clustered(1, seed=3)[0], allowed, 10, -1.0)
    assert sorted(p for p, _ in hits) == [5, 900, 2_999]


def test_writes_and_removals_are_seen_and_zero_vectors_never_match() -> None:
    matrix, pks = clustered(1_000), np.arange(1_000, dtype=np.int64)
    approximate = ApproximateIndex.build(DIM, pks, matrix)
    query = clustered(1, seed=4)[0]
    approximate.upsert([7], query[None, :])
    assert approximate.search(query, None, 1, -1.0)[0][0] == 7
    approximate.remove([7])
    assert 7 not in {p for p, _ in approximate.search(query, None, 50, -1.0)}
    approximate.upsert([8], np.zeros((1, DIM), dtype=np.float32))
    assert 8 not in {p for p, _ in approximate.search(query, None, 1_000, -1.0)}
    assert approximate.scores(query, [8, 9])[8] == 0.0
    assert len(approximate) == 999  # 7 removed; 8 held, as a zero vector
    with pytest.raises(DimensionMismatchError, match="shape"):
        approximate.search(np.ones(DIM + 1, dtype=np.float32), None, 5, -1.0)


def saved(folder: Path) -> list[str]:
    """The suffixes of the approximate indexes written in `folder`."""
    return sorted(path.suffix for path in folder.glob("vectors-chunks-*"))


async def test_the_store_switches_to_the_index_and_reads_it_back_after_a_reopen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = clustered(400)
    records = [record(f"r{i}", vector=v) for i, v in enumerate(vectors)]
    query = vectors[17]
    async with await Database.open(tmp_path) as db:
        store = await SqliteSearchStore.open(db, approximate_from=300)
        await store.upsert(Collection.CHUNKS, records[:200])
        hits = await store.search_vector(Collection.CHUNKS, WS, query, NO_FILTER, 1)
        assert ids(hits) == ["r17"]
        await store.close()
    assert saved(tmp_path) == []  # exact below the threshold: nothing to save
    async with await Database.open(tmp_path) as db:
        store = await SqliteSearchStore.open(db, approximate_from=300)
        await store.search_vector(Collection.CHUNKS, WS, query, NO_FILTER, 1)
        await store.upsert(Collection.CHUNKS, records[200:])  # crosses it: approximate
        await store.delete(Collection.CHUNKS, WS, ["r17"])
        before = await store.search_vector(Collection.CHUNKS, WS, query, NO_FILTER, 10)
        assert "r17" not in ids(before)
        await store.close()
    assert saved(tmp_path) == [".faiss", ".npz"]

    def not_built(*_: object) -> ApproximateIndex:
        raise AssertionError("the saved index should have been read")

    monkeypatch.setattr(ApproximateIndex, "build", not_built)
    async with await Database.open(tmp_path) as db:
        store = await SqliteSearchStore.open(db, approximate_from=300)
        after = await store.search_vector(Collection.CHUNKS, WS, query, NO_FILTER, 10)
        assert ids(after) == ids(before)
        only = SearchFilter(doc_ids=frozenset({"doc-1"}))
        assert len(await store.search_vector(Collection.CHUNKS, WS, query, only, 500)) == 399


async def test_a_saved_index_behind_the_store_is_not_used(tmp_path: Path) -> None:
    vectors = clustered(300)
    async with await Database.open(tmp_path) as db:
        store = await SqliteSearchStore.open(db, approximate_from=100)
        await store.upsert(
            Collection.CHUNKS, [record(f"r{i}", vector=vectors[i]) for i in range(200)]
        )
        await store.search_vector(Collection.CHUNKS, WS, vectors[0], NO_FILTER, 1)
        await store.close()
    async with await Database.open(tmp_path) as db:
        # Another writer (exact: it never loads the index) adds records after the save.
        other = await SqliteSearchStore.open(db)
        await other.upsert(Collection.CHUNKS, [record("late", vector=vectors[250])])
        store = await SqliteSearchStore.open(db, approximate_from=100)
        hits = await store.search_vector(Collection.CHUNKS, WS, vectors[250], NO_FILTER, 1)
        assert ids(hits) == ["late"]


async def test_a_store_searching_exactly_ignores_a_saved_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = clustered(200)
    async with await Database.open(tmp_path) as db:
        store = await SqliteSearchStore.open(db, approximate_from=100)
        await store.upsert(
            Collection.CHUNKS, [record(f"r{i}", vector=v) for i, v in enumerate(vectors)]
        )
        await store.search_vector(Collection.CHUNKS, WS, vectors[0], NO_FILTER, 1)
        await store.close()
    assert saved(tmp_path) == [".faiss", ".npz"]
    searched: list[object] = []

    def approximate(*args: object) -> list[tuple[int, float]]:
        searched.append(args)
        return []

    monkeypatch.setattr(ApproximateIndex, "search", approximate)
    async with await Database.open(tmp_path) as db:
        store = await SqliteSearchStore.open(db, approximate_from=1_000)
        [hit] = await store.search_vector(Collection.CHUNKS, WS, vectors[5], NO_FILTER, 1)
        assert hit.record.id == "r5" and not searched
