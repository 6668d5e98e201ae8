"""The one SQLite database of a data directory, shared by every embedded backend.

Durability: WAL journal with `synchronous=NORMAL`. A committed transaction is in the WAL
file (in the OS page cache) when COMMIT returns, so it survives the process being killed
(kill -9, OOM). Only an OS crash or power loss can lose the last transactions, which the
embedded deployment accepts; FULL would add an fsync to every commit for that case alone.

Threads: SQLite calls block, so none runs on the event loop. Writes run on one dedicated
writer thread over one connection (SQLite allows one writer at a time anyway, and queued
writes then never occupy reader threads); reads run on reader threads, each with its own
connection, which in WAL mode read a consistent snapshot without waiting for the writer.

One reader thread by default (`storage.reader_threads`). Python's sqlite3 releases the
interpreter lock around every row it steps, so reads running at once hand the lock to and
fro between rows while the Python around them waits for it: on the demo corpus a mix
query's retrieval took a fifth less CPU on one reader thread than on four
(tests/bench/bench_query_stages.py). Dense searches have threads of their own (`scan`,
`storage.scan_threads`): their scoring runs in numpy or faiss without the lock, so it
overlaps the BM25 search of the same query as it did on four reader threads
(tests/bench/bench_search_stores.py; README, "Approximate vector search").
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

T = TypeVar("T")
P = TypeVar("P")

DB_FILE_NAME = "ragstream.db"
_FIRST_PAUSE_S = 0.0001
_LAST_PAUSE_S = 0.002
"""The pauses between tries for the write lock (`Database._begin_immediate`)."""

Migration = Sequence[str]
"""One schema step: SQL statements applied in one transaction."""


class DatabaseClosedError(RuntimeError):
    """The database was used after close()."""


class SchemaVersionError(RuntimeError):
    """The database was written by a newer ragstream than this one."""


class Database:
    """Owns the connections and threads of one SQLite file; use `await Database.open(...)`."""

    def __init__(
        self,
        path: Path,
        *,
        reader_threads: int = 1,
        scan_threads: int = 1,
        busy_timeout_ms: int = 10_000,
    ) -> None:
        self.path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._writer_pool = ThreadPoolExecutor(1, thread_name_prefix="ragstream-db-writer")
        self._reader_pool = ThreadPoolExecutor(
            reader_threads, thread_name_prefix="ragstream-db-reader"
        )
        self._scan_pool = ThreadPoolExecutor(scan_threads, thread_name_prefix="ragstream-db-scan")
        self._write_lock = threading.Lock()
        self._writer: sqlite3.Connection | None = None
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False

    @classmethod
    async def open(
        cls, data_dir: Path, *, reader_threads: int = 1, scan_threads: int = 1
    ) -> Database:
        """Opens (creating if needed) `<data_dir>/ragstream.db` in WAL mode."""
        return await cls.open_file(
            data_dir / DB_FILE_NAME, reader_threads=reader_threads, scan_threads=scan_threads
        )

    @classmethod
    async def open_file(
        cls, path: Path, *, reader_threads: int = 1, scan_threads: int = 1
    ) -> Database:
        db = cls(path, reader_threads=reader_threads, scan_threads=scan_threads)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(db._writer_pool, db._open_writer)
        return db

    def _connect(self, *, writer: bool) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            isolation_level=None,  # transactions are explicit: BEGIN ... COMMIT below
            check_same_thread=False,  # close() closes every connection from its own thread
            timeout=self._busy_timeout_ms / 1000,
        )
        conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA synchronous = NORMAL")
        if not writer:
            conn.execute("PRAGMA query_only = ON")
        return conn

    def _open_writer(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect(writer=True)
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            conn.close()
            raise RuntimeError(f"cannot put {self.path} in WAL mode (journal_mode={mode})")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version "
            "(component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
        )
        # From here on the writer waits for the lock in _begin_immediate's steps, and once
        # it holds the lock nothing it runs waits for another process.
        conn.execute("PRAGMA busy_timeout = 0")
        self._writer = conn

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Runs `fn` in one write transaction; committed (durable) when this returns."""
        return await self._submit(self._writer_pool, self._write_sync, fn)

    async def write_prepared(
        self, prepare: Callable[[], P], fn: Callable[[sqlite3.Connection, P], T]
    ) -> T:
        """`write(fn)` given what `prepare()` returns, which runs first on the writer thread,
        before the transaction: work that needs no database (encoding rows) then holds no
        write lock, which the writers of the other processes of a data directory wait for
        (`indexer.processes`)."""
        self._check_open()

        def run() -> T:
            prepared = prepare()
            return self._write_sync(lambda conn: fn(conn, prepared))

        return await asyncio.get_running_loop().run_in_executor(self._writer_pool, run)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Runs `fn` in one read transaction: every SELECT in it sees the same snapshot."""
        return await self._submit(self._reader_pool, self._read_sync, fn)

    async def scan(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`read`, on a scan thread: for a read that spends its time outside the interpreter
        lock (a dense search's scoring), so that it runs beside the other reads."""
        return await self._submit(self._scan_pool, self._read_sync, fn)

    async def _submit(
        self,
        pool: ThreadPoolExecutor,
        runner: Callable[[Callable[[sqlite3.Connection], T]], T],
        fn: Callable[[sqlite3.Connection], T],
    ) -> T:
        self._check_open()
        return await asyncio.get_running_loop().run_in_executor(pool, runner, fn)

    def _check_open(self) -> None:
        if self._closed:
            raise DatabaseClosedError(f"database {self.path} is closed")

    def _write_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        with self._write_lock:
            conn = self._writer
            if conn is None:
                raise DatabaseClosedError(f"database {self.path} is closed")
            # IMMEDIATE takes the write lock up front, so a busy database waits here
            # instead of failing at the first write statement.
            self._begin_immediate(conn)
            try:
                result = fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result

    def _begin_immediate(self, conn: sqlite3.Connection) -> None:
        """BEGIN IMMEDIATE, waiting for another process's writer in short steps.

        SQLite's own busy handler sleeps 1, 2, 5, 10 ... up to 100 ms between tries, while a
        writer of the other processes of a data directory (`indexer.processes`) holds the
        lock for a millisecond or two: the lock then stood idle between its holders. Tried
        every 0.1 to 2 ms instead, up to `busy_timeout_ms`, as SQLite would (the writer's
        connection has no busy timeout of its own: setting it to 0 and back around every
        BEGIN cost two statements per transaction, each a hand-over of the GIL, the second
        with the lock held)."""
        deadline = time.monotonic() + self._busy_timeout_ms / 1000
        pause = _FIRST_PAUSE_S
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                busy = exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_BUSY  # or its variants
                if not busy or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, _LAST_PAUSE_S)

    def _read_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect(writer=False)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        conn.execute("BEGIN")
        try:
            return fn(conn)
        finally:
            conn.execute("ROLLBACK")  # nothing to keep: readers are query_only

    async def migrate(self, component: str, steps: Sequence[Migration]) -> None:
        """Brings `component`'s schema to version len(steps), applying missing steps in order."""

        def apply(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT version FROM schema_version WHERE component = ?", (component,)
            ).fetchone()
            current = int(row[0]) if row else 0
            if current > len(steps):
                raise SchemaVersionError(
                    f"{self.path}: schema '{component}' is at version {current}, this "
                    f"ragstream knows {len(steps)}; upgrade ragstream or use a new data_dir"
                )
            for step in steps[current:]:
                for statement in step:
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_version(component, version) VALUES (?, ?) "
                "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                (component, len(steps)),
            )

        await self.write(apply)

    async def schema_version(self, component: str) -> int:
        def query(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT version FROM schema_version WHERE component = ?", (component,)
            ).fetchone()
            return int(row[0]) if row else 0

        return await self.read(query)

    async def close(self) -> None:
        """Waits for queued work, then closes every connection. Idempotent."""
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(self._shutdown)

    def _shutdown(self) -> None:
        self._writer_pool.shutdown(wait=True)
        self._reader_pool.shutdown(wait=True)
        self._scan_pool.shutdown(wait=True)
        with self._write_lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
