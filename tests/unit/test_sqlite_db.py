"""The shared SQLite database: settings, migrations, transactions, threads and close."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from ragstream.common.config import load_settings
from ragstream.common.providers.embedding import HashEmbedder
from ragstream.common.registry import Opening
from ragstream.common.storage.sqlite import Database, DatabaseClosedError, SchemaVersionError

STEP_1 = ("CREATE TABLE t (x INTEGER)",)
STEP_2 = ("ALTER TABLE t ADD COLUMN y TEXT", "CREATE INDEX t_y ON t (y)")


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    async with await Database.open(tmp_path / "data") as database:
        yield database


def scalar(sql: str) -> Callable[[sqlite3.Connection], object]:
    def run(conn: sqlite3.Connection) -> object:
        return conn.execute(sql).fetchone()[0]

    return run


async def test_the_file_is_in_wal_mode_with_normal_sync(db: Database, tmp_path: Path) -> None:
    assert db.path == tmp_path / "data" / "ragstream.db" and db.path.is_file()
    assert await db.read(scalar("PRAGMA journal_mode")) == "wal"
    assert await db.read(scalar("PRAGMA synchronous")) == 1  # NORMAL
    assert await db.write(scalar("PRAGMA foreign_keys")) == 1
    assert await db.read(scalar("PRAGMA busy_timeout")) == 10_000


async def test_migrations_apply_each_step_once(db: Database) -> None:
    await db.migrate("demo", [STEP_1])
    await db.write(lambda conn: conn.execute("INSERT INTO t (x) VALUES (1)"))
    await db.migrate("demo", [STEP_1])  # already there: nothing re-runs
    await db.migrate("demo", [STEP_1, STEP_2])
    assert await db.schema_version("demo") == 2
    assert await db.read(scalar("SELECT count(*) FROM t WHERE y IS NULL")) == 1
    assert await db.schema_version("other") == 0


async def test_a_failing_step_changes_nothing(db: Database) -> None:
    broken = ("CREATE TABLE u (x INTEGER)", "THIS IS NOT SQL")
    with pytest.raises(sqlite3.OperationalError):
        await db.migrate("demo", [STEP_1, broken])
    assert await db.schema_version("demo") == 0
    assert await db.read(scalar("SELECT count(*) FROM sqlite_master WHERE name IN ('t','u')")) == 0


async def test_a_newer_schema_is_refused(db: Database) -> None:
    await db.migrate("demo", [STEP_1, STEP_2])
    with pytest.raises(SchemaVersionError, match="version 2, this ragstream knows 1"):
        await db.migrate("demo", [STEP_1])


async def test_a_failed_write_is_rolled_back(db: Database) -> None:
    await db.migrate("demo", [STEP_1])

    def insert_then_fail(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t (x) VALUES (1)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        await db.write(insert_then_fail)
    assert await db.read(scalar("SELECT count(*) FROM t")) == 0


async def test_a_write_waits_for_another_writer_of_the_file_then_runs(
    db: Database, tmp_path: Path
) -> None:
    await db.migrate("demo", [STEP_1])
    other = sqlite3.connect(tmp_path / "data" / "ragstream.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
    other.execute("INSERT INTO t (x) VALUES (1)")
    order: list[str] = []

    def insert(conn: sqlite3.Connection) -> None:
        order.append("second")
        conn.execute("INSERT INTO t (x) VALUES (2)")

    write = asyncio.create_task(db.write(insert))
    await asyncio.sleep(0.2)
    assert not write.done()  # still waiting for the lock
    order.append("first")
    other.execute("COMMIT")
    other.close()
    await write
    assert order == ["first", "second"]
    assert await db.read(scalar("SELECT group_concat(x) FROM t")) == "1,2"


async def test_a_prepared_write_prepares_without_the_lock_then_writes_what_it_made(
    db: Database, tmp_path: Path
) -> None:
    await db.migrate("demo", [STEP_1])
    other = sqlite3.connect(
        tmp_path / "data" / "ragstream.db", isolation_level=None, check_same_thread=False
    )

    def prepare() -> list[int]:
        # Another process's writer can take the lock meanwhile: this one does not hold it.
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO t (x) VALUES (1)")
        other.execute("COMMIT")
        return [2, 3]

    def insert(conn: sqlite3.Connection, values: list[int]) -> int:
        conn.executemany("INSERT INTO t (x) VALUES (?)", [(v,) for v in values])
        return len(values)

    assert await db.write_prepared(prepare, insert) == 2
    assert await db.read(scalar("SELECT group_concat(x) FROM t")) == "1,2,3"

    def broken() -> list[int]:
        raise ValueError("bad record")

    with pytest.raises(ValueError, match="bad record"):
        await db.write_prepared(broken, insert)
    other.close()
    assert await db.read(scalar("SELECT count(*) FROM t")) == 3


async def test_a_write_gives_up_after_the_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "ragstream.db"
    db = Database(path, busy_timeout_ms=300)
    await asyncio.get_running_loop().run_in_executor(None, db._open_writer)
    async with db:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        began = time.monotonic()
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await db.write(scalar("SELECT 1"))
        assert time.monotonic() - began >= 0.3
        other.execute("ROLLBACK")
        other.close()
        assert await db.write(scalar("SELECT 1")) == 1


async def test_blocking_work_never_stalls_the_event_loop(db: Database) -> None:
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    await asyncio.gather(
        db.write(lambda conn: time.sleep(0.3)),
        db.read(lambda conn: time.sleep(0.3)),
        db.scan(lambda conn: time.sleep(0.3)),
    )
    ticker.cancel()
    assert ticks >= 10


def counted(counter: dict[str, int]) -> Callable[[sqlite3.Connection], None]:
    """A read of 0.1 s that counts, in `counter`, the reads running and the most at once;
    every run of it shares one lock, so make it once per counter."""
    lock = threading.Lock()

    def read(conn: sqlite3.Connection) -> None:
        with lock:
            counter["running"] = counter.get("running", 0) + 1
            counter["most"] = max(counter.get("most", 0), counter["running"])
        time.sleep(0.1)
        with lock:
            counter["running"] -= 1

    return read


async def most_at_once(run: Callable[[Callable[[sqlite3.Connection], None]], Any]) -> int:
    """How many of four reads started together through `run` ran at the same time."""
    counter: dict[str, int] = {}
    read = counted(counter)
    await asyncio.gather(*(run(read) for _ in range(4)))
    return counter["most"]


async def test_reads_and_scans_each_run_on_as_many_threads_as_asked(tmp_path: Path) -> None:
    async with await Database.open(tmp_path, reader_threads=1, scan_threads=3) as db:
        assert await most_at_once(db.read) == 1
        assert await most_at_once(db.scan) == 3
        # A scan runs beside a read that holds the one reader thread, in its own snapshot.
        counter: dict[str, int] = {}
        read = counted(counter)
        await asyncio.gather(db.read(read), db.scan(read))
        assert counter["most"] == 2
        assert await db.scan(scalar("SELECT count(*) FROM schema_version")) == 0


async def test_the_storage_settings_size_the_data_directory_s_database(tmp_path: Path) -> None:
    storage = {"reader_threads": 2, "scan_threads": 1}
    settings = load_settings(None, data_dir=tmp_path, storage=storage)
    async with contextlib.AsyncExitStack() as stack:
        db = await Opening(settings, stack, HashEmbedder()).database()
        assert await most_at_once(db.read) == 2
        assert await most_at_once(db.scan) == 1


async def test_a_closed_database_refuses_work(tmp_path: Path) -> None:
    db = await Database.open(tmp_path)
    await db.close()
    await db.close()
    with pytest.raises(DatabaseClosedError):
        await db.read(scalar("SELECT 1"))
    with pytest.raises(DatabaseClosedError):
        await db.write(scalar("SELECT 1"))
