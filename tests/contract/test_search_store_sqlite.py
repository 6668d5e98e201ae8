"""The embedded search store: the shared contract, plus what only this backend promises."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from ragstream.common.models import Collection, SearchFilter, SearchRecord
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.storage.sqlite import Database, DimensionMismatchError, SqliteSearchStore
from ragstream.common.storage.sqlite.dense import DenseIndex, top_k
from ragstream.common.storage.sqlite.search_schema import MIGRATIONS, query_terms
from tests.contract.search_store_contract import (
    NO_FILTER,
    WS,
    SearchStoreContract,
    ids,
    record,
    unit,
)


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(tmp_path)
    yield database
    await database.close()


class TestSqliteSearchStore(SearchStoreContract):
    @pytest.fixture
    async def store(self, db: Database) -> SearchStore:
        return await SqliteSearchStore.open(db)


async def test_vectors_of_another_size_are_a_clear_error(db: Database) -> None:
    store = await SqliteSearchStore.open(db)
    await store.upsert(Collection.CHUNKS, [record("r1")])
    other = record("r2", vector=np.ones(4, dtype=np.float32))
    with pytest.raises(DimensionMismatchError, match=r"8-d vectors.*'r2' has 4"):
        await store.upsert(Collection.CHUNKS, [other])
    with pytest.raises(DimensionMismatchError, match="shape"):
        await store.search_vector(Collection.CHUNKS, WS, np.ones(4, np.float32), NO_FILTER, 5)
    assert ids(await store.search_vector(Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 5)) == ["r1"]
    # Another workspace or collection has its own size; an emptied one accepts a new size.
    await store.upsert(Collection.ENTITIES, [other])
    await store.delete(Collection.CHUNKS, WS, ["r1"])
    await store.upsert(Collection.CHUNKS, [other])
    assert await store.count(Collection.CHUNKS, WS) == 1


async def test_invalid_vectors_are_rejected_before_anything_is_written(db: Database) -> None:
    store = await SqliteSearchStore.open(db)
    bad = record("bad", vector=np.array([np.nan, 1.0], dtype=np.float32))
    with pytest.raises(ValueError, match="NaN"):
        await store.upsert(Collection.CHUNKS, [record("good"), bad])
    assert await store.count(Collection.CHUNKS, WS) == 0


async def test_records_and_vectors_survive_a_reopen(tmp_path: Path) -> None:
    async with await Database.open(tmp_path) as first:
        store = await SqliteSearchStore.open(first)
        await store.upsert(Collection.CHUNKS, [record("r1", ["alpha"], vector=unit(0.0, 1.0))])
    async with await Database.open(tmp_path) as second:
        store = await SqliteSearchStore.open(second)
        assert ids(await store.search_terms(Collection.CHUNKS, WS, ["alpha"], NO_FILTER, 5)) == [
            "r1"
        ]
        [hit] = await store.search_vector(Collection.CHUNKS, WS, unit(0.0, 1.0), NO_FILTER, 5)
        assert hit.score == pytest.approx(1.0, abs=1e-5)


async def test_a_store_sees_writes_made_through_another_instance(db: Database) -> None:
    reader, writer = await SqliteSearchStore.open(db), await SqliteSearchStore.open(db)
    await writer.upsert(Collection.CHUNKS, [record("r1", vector=unit(1.0))])
    assert ids(await reader.search_vector(Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 5)) == ["r1"]
    await writer.upsert(Collection.CHUNKS, [record("r2", vector=unit(1.0, 0.1))])
    await writer.delete(Collection.CHUNKS, WS, ["r1"])
    assert ids(await reader.search_vector(Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 5)) == ["r2"]


async def test_bm25_sees_writes_of_this_and_another_instance_after_caching(db: Database) -> None:
    reader, writer = await SqliteSearchStore.open(db), await SqliteSearchStore.open(db)
    await reader.upsert(Collection.CHUNKS, [record("r1", ["alpha", "beta"])])

    async def found(term: str) -> list[str]:
        return ids(await reader.search_terms(Collection.CHUNKS, WS, [term], NO_FILTER, 5))

    assert await found("alpha") == await found("beta") == ["r1"]  # both terms now cached
    await reader.upsert(Collection.CHUNKS, [record("r2", ["alpha"])])
    assert await found("alpha") == ["r2", "r1"] and await found("beta") == ["r1"]
    await writer.upsert(Collection.CHUNKS, [record("r1", ["gamma"])])
    assert await found("alpha") == ["r2"] and await found("beta") == []
    assert await found("gamma") == ["r1"]


async def test_concurrent_writes_and_searches_stay_consistent(db: Database) -> None:
    store = await SqliteSearchStore.open(db)
    await store.upsert(Collection.CHUNKS, [record("seed", ["shared"])])

    async def write(batch: int) -> None:
        rows = [record(f"b{batch}-{i}", ["shared"], vector=unit(1.0, i)) for i in range(20)]
        await store.upsert(Collection.CHUNKS, rows)
        await store.delete(Collection.CHUNKS, WS, [f"b{batch}-0"])

    async def search() -> int:
        return len(await store.search_vector(Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 500))

    results = await asyncio.gather(*(write(b) for b in range(10)), *(search() for _ in range(10)))
    assert all(isinstance(n, int) and n >= 1 for n in results[10:])
    assert await store.count(Collection.CHUNKS, WS) == 1 + 10 * 19
    hits = await store.search_vector(Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 500)
    assert len(hits) == 1 + 10 * 19


def test_query_terms_drops_blanks_and_duplicates() -> None:
    assert query_terms(["a", 'say"hi', "a", " ", ""]) == ["a", 'say"hi']
    assert query_terms([]) == []


def test_dense_index_keeps_rows_in_step_through_removals() -> None:
    index = DenseIndex(None, np.empty(0, np.int64), np.empty((0, 0), np.float32), 0)
    vectors = np.stack([unit(1.0, i / 10) for i in range(2000)])
    index.upsert(list(range(2000)), vectors)
    index.remove([0, 5, 1999, 12345])
    index.upsert([7], unit(-1.0)[None, :])
    assert len(index) == 1997
    best = index.search(unit(1.0), None, 3, -1.0)
    assert [pk for pk, _ in best] == [1, 2, 3]
    assert index.search(unit(-1.0), None, 1, -1.0)[0][0] == 7
    allowed = np.array([5, 7, 1500], dtype=np.int64)
    assert [pk for pk, _ in index.search(unit(1.0), allowed, 10, -1.0)] == [1500, 7]


def test_top_k_returns_the_best_positions_in_order() -> None:
    scores = np.array([0.1, 0.9, 0.5, 0.9, -0.2], dtype=np.float32)
    assert top_k(scores, 3).tolist() == [1, 3, 2]
    assert top_k(scores, 10).tolist() == [1, 3, 2, 0, 4]
    assert top_k(scores, 0).tolist() == []


async def test_a_version_1_index_moves_to_postings_with_the_same_bm25(tmp_path: Path) -> None:
    records = [
        record("r1", ["solar", "panel", "solar"], timestamp=5.0),
        record("r2", ["solar", *[f"filler{i}" for i in range(20)]]),
        record("r3", ["wind", "", "hydro"]),
    ]
    async with await Database.open(tmp_path / "fresh") as fresh_db:
        fresh = await SqliteSearchStore.open(fresh_db)
        await fresh.upsert(Collection.CHUNKS, records)
        expected = await fresh.search_terms(Collection.CHUNKS, WS, ["solar", "hydro"], NO_FILTER, 5)
    async with await Database.open(tmp_path / "old") as old_db:
        await old_db.migrate("search", MIGRATIONS[:1])
        await old_db.write(lambda conn: _write_version_1(conn, records))
        store = await SqliteSearchStore.open(old_db)
        hits = await store.search_terms(Collection.CHUNKS, WS, ["solar", "hydro"], NO_FILTER, 5)
        assert [(h.record.id, h.score) for h in hits] == [(h.record.id, h.score) for h in expected]
        await store.delete(Collection.CHUNKS, WS, ["r1"])
        await store.upsert(Collection.CHUNKS, [record("r4", ["hydro"])])
        assert ids(await store.search_terms(Collection.CHUNKS, WS, ["hydro"], NO_FILTER, 5)) == [
            "r4",
            "r3",
        ]


async def test_postings_of_two_workspaces_move_to_their_own_ranges(tmp_path: Path) -> None:
    """Version 4: a posting carries its workspace's number and its record's length; the
    same searches answer the same in both workspaces, filtered or not, before and after."""
    records = [
        record("a1", ["solar", "panel", "solar"], doc_ids=("d1",), timestamp=5.0),
        record("a2", ["solar", *[f"filler{i}" for i in range(9)]], doc_ids=("d2",)),
        record("b1", ["solar", "wind"], workspace="other", doc_ids=("d1",)),
        record("b2", ["wind", "wind", "solar", "hydro"], workspace="other", doc_ids=("d3",)),
    ]
    d1 = SearchFilter(doc_ids=frozenset({"d1"}))
    Answers = dict[tuple[str, str, bool], list[str]]

    async def answers(store: SqliteSearchStore) -> tuple[Answers, list[float]]:
        found: Answers = {}
        scores: list[float] = []
        for workspace in (WS, "other", "never-written"):
            for terms in ("solar", "solar wind hydro", "filler3"):
                for search_filter in (NO_FILTER, d1):
                    hits = await store.search_terms(
                        Collection.CHUNKS, workspace, terms.split(), search_filter, 5
                    )
                    found[workspace, terms, search_filter is d1] = ids(hits)
                    scores += [hit.score for hit in hits]
        return found, scores

    async with await Database.open(tmp_path / "fresh") as fresh_db:
        fresh = await SqliteSearchStore.open(fresh_db)
        await fresh.upsert(Collection.CHUNKS, records)
        expected, scores = await answers(fresh)
    assert expected[WS, "solar", False] == ["a1", "a2"]
    assert expected[WS, "solar", True] == ["a1"]
    assert expected["other", "solar wind hydro", False] == ["b2", "b1"]
    assert expected["other", "solar wind hydro", True] == ["b1"]
    assert expected["other", "filler3", False] == []
    assert not any(expected["never-written", terms, f] for terms, f in [("solar", False)])
    async with await Database.open(tmp_path / "old") as old_db:
        await old_db.migrate("search", MIGRATIONS[:1])
        await old_db.write(lambda conn: _write_version_1(conn, records))
        store = await SqliteSearchStore.open(old_db)
        assert await answers(store) == (expected, scores)
        numbered = await old_db.read(
            lambda conn: conn.execute(
                "SELECT DISTINCT w.name FROM search_chunks_postings AS p "
                "JOIN search_workspaces AS w ON w.id = p.ws ORDER BY 1"
            ).fetchall()
        )
        assert numbered == [("other",), (WS,)]
        await store.delete(Collection.CHUNKS, "other", ["b2"])
        wind = await store.search_terms(Collection.CHUNKS, "other", ["wind"], NO_FILTER, 5)
        assert ids(wind) == ["b1"]


def _write_version_1(conn: sqlite3.Connection, records: list[SearchRecord]) -> None:
    """Rows as schema version 1 wrote them, FTS5 index included."""
    for pk, r in enumerate(records, start=1):
        conn.execute(
            "INSERT INTO search_chunks (pk, workspace, id, ts, metadata) VALUES (?, ?, ?, ?, '{}')",
            (pk, r.workspace, r.id, r.timestamp),
        )
        conn.execute(
            "INSERT INTO search_chunks_data (pk, text, terms, doc_ids, attrs) "
            "VALUES (?, ?, ?, ?, '{}')",
            (pk, r.text, json.dumps(list(r.terms)), json.dumps(list(r.doc_ids))),
        )
        conn.execute(
            "INSERT INTO search_chunks_vectors (pk, vector) VALUES (?, ?)",
            (pk, np.asarray(r.vector, dtype="<f4").tobytes()),
        )
        conn.execute(
            "INSERT INTO search_chunks_fts (rowid, terms) VALUES (?, ?)", (pk, " ".join(r.terms))
        )
        conn.executemany(
            "INSERT INTO search_chunks_docs (doc_id, pk) VALUES (?, ?)",
            [(doc_id, pk) for doc_id in r.doc_ids],
        )


async def test_a_record_written_twice_in_one_call_is_indexed_once_as_last_written(
    db: Database,
) -> None:
    store = await SqliteSearchStore.open(db)
    await store.upsert(Collection.CHUNKS, [record("r1", ["old"]), record("other", ["new", "x"])])
    await store.upsert(Collection.CHUNKS, [record("r1", ["mid", "new"]), record("r1", ["new"])])
    for term, expected in (("old", []), ("mid", []), ("new", ["r1", "other"])):
        hits = await store.search_terms(Collection.CHUNKS, WS, [term], NO_FILTER, 5)
        assert ids(hits) == expected, term
    stats = await db.read(
        lambda conn: conn.execute(
            "SELECT (SELECT df FROM search_chunks_df WHERE term = 'new'), "
            "(SELECT count(*) FROM search_chunks_df WHERE term IN ('old', 'mid')), "
            "records, tokens FROM search_bm25 WHERE collection = 'chunks'"
        ).fetchone()
    )
    assert stats == (2, 0, 2, 3)


def table_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every search table, pks included, in a fixed order; not search_state,
    whose change counter counts write calls."""
    with sqlite3.connect(path) as conn:
        names = [
            str(row[0])
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'search%' "
                "AND name != 'search_state' ORDER BY name"
            )
        ]
        return {name: sorted(conn.execute(f"SELECT * FROM {name}").fetchall()) for name in names}


async def test_a_batch_writes_exactly_what_one_record_at_a_time_writes(tmp_path: Path) -> None:
    first = [record(f"r{i}", ["alpha", f"t{i}"], metadata={"k": str(i)}) for i in range(6)]
    second = [
        record("r2", ["beta"], doc_ids=("doc-2",), metadata={"k": "new"}),  # replaces r2
        record("r9", ["gamma", "gamma"]),
        record("r4", ["delta"]),
    ]
    dumps = []
    for name, batches in (
        ("batched", [first, second]),
        ("one-by-one", [[r] for r in first + second]),
    ):
        async with await Database.open(tmp_path / name) as db:
            store = await SqliteSearchStore.open(db)
            for batch in batches:
                await store.upsert(Collection.CHUNKS, batch)
            await store.delete(Collection.CHUNKS, WS, ["r1"])
            await store.upsert(Collection.CHUNKS, [record("r10", ["alpha"])])
        dumps.append(table_rows(tmp_path / name / "ragstream.db"))
    assert dumps[0] == dumps[1]


async def test_a_record_given_twice_in_one_write_is_stored_as_its_last_copy(db: Database) -> None:
    store = await SqliteSearchStore.open(db)
    twice = [
        record("r1", ["old"]),
        record("r2", ["other"]),
        record("r1", ["new"], vector=unit(0.0, 1.0)),
    ]
    await store.upsert(Collection.CHUNKS, twice)
    assert await store.count(Collection.CHUNKS, WS) == 2
    [stored] = await store.get(Collection.CHUNKS, WS, ["r1"])
    assert stored.terms == ("new",)
    assert ids(await store.search_terms(Collection.CHUNKS, WS, ["old"], NO_FILTER, 5)) == []
    assert ids(await store.search_vector(Collection.CHUNKS, WS, unit(0.0, 1.0), NO_FILTER, 1)) == [
        "r1"
    ]


class TestSqliteSearchStoreApproximate(SearchStoreContract):
    """The same contract with every collection searched by its approximate index."""

    @pytest.fixture
    async def store(self, db: Database) -> SearchStore:
        return await SqliteSearchStore.open(db, approximate_from=1)
