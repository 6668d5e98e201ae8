"""The embedded event bus: an append-only log per topic in the shared SQLite database.

Each topic has one partition (0) whose offsets only grow (the next offset is kept per
topic, so offsets are never reused). A consumer group stores, per topic, the offset of
the next record to process; a consumer starts there, so after a crash the records
polled but not committed are delivered again (at-least-once), and committed ones never.

A consumer waiting in `poll` is woken at once by a publish through the same
SqliteEventLog (same process), and notices other processes' appends within
`poll_interval` seconds. Each group has one member at a time.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sqlite3
import time
from collections.abc import Callable, Sequence

from ragstream.common.bus.protocols import Bus, BusRecord, OutgoingRecord
from ragstream.common.storage.sqlite.db import Database, Migration

PARTITION = 0

MIGRATIONS: tuple[Migration, ...] = (
    (
        "CREATE TABLE bus_topics (topic TEXT PRIMARY KEY, next_offset INTEGER NOT NULL) "
        "WITHOUT ROWID",
        "CREATE TABLE bus_records (topic TEXT NOT NULL, offset INTEGER NOT NULL, "
        "key TEXT NOT NULL, value BLOB, headers TEXT NOT NULL, ts REAL NOT NULL, "
        "PRIMARY KEY (topic, offset)) WITHOUT ROWID",
        "CREATE TABLE bus_offsets (group_id TEXT NOT NULL, topic TEXT NOT NULL, "
        "partition INTEGER NOT NULL, offset INTEGER NOT NULL, "
        "PRIMARY KEY (group_id, topic, partition)) WITHOUT ROWID",
    ),
)


def _encode_headers(headers: Sequence[tuple[str, bytes]]) -> str:
    return json.dumps([[name, base64.b64encode(value).decode()] for name, value in headers])


def _decode_headers(text: str) -> tuple[tuple[str, bytes], ...]:
    return tuple((name, base64.b64decode(value)) for name, value in json.loads(text))


class _AppendSignal:
    """Wakes this process's waiting consumers when a record is appended."""

    def __init__(self) -> None:
        self._condition = asyncio.Condition()
        self.count = 0
        """Appends so far; a waiter passes the count it saw before reading the log, so an
        append that lands between its read and its wait still wakes it."""

    async def notify(self) -> None:
        async with self._condition:
            self.count += 1
            self._condition.notify_all()

    async def wait(self, seen: int, timeout: float) -> None:
        """Returns once `count` differs from `seen`, or after `timeout` seconds."""
        async with self._condition:
            try:
                async with asyncio.timeout(timeout):
                    await self._condition.wait_for(lambda: self.count != seen)
            except TimeoutError:
                pass


class SqliteEventLog:
    """Publisher over the log, and the factory of its consumers.

    Create with `await SqliteEventLog.open(db)`; share one instance per process so that
    publishes wake local consumers immediately.
    """

    def __init__(self, db: Database, *, poll_interval: float = 0.1) -> None:
        self._db = db
        self.poll_interval = poll_interval
        self._appended = _AppendSignal()
        self._active_groups: set[str] = set()

    @classmethod
    async def open(cls, db: Database, *, poll_interval: float = 0.1) -> SqliteEventLog:
        await db.migrate("bus", MIGRATIONS)
        return cls(db, poll_interval=poll_interval)

    async def publish(self, topic: str, records: Sequence[OutgoingRecord]) -> None:
        """Appends in order, in one transaction; durable (committed) when this returns."""
        if not topic:
            raise ValueError("topic must not be empty")
        if not records:
            return
        now = time.time()

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO bus_topics (topic, next_offset) VALUES (?, 0) "
                "ON CONFLICT (topic) DO NOTHING",
                (topic,),
            )
            (first,) = conn.execute(
                "SELECT next_offset FROM bus_topics WHERE topic = ?", (topic,)
            ).fetchone()
            conn.executemany(
                "INSERT INTO bus_records (topic, offset, key, value, headers, ts) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (topic, first + i, r.key, r.value, _encode_headers(r.headers), now)
                    for i, r in enumerate(records)
                ],
            )
            conn.execute(
                "UPDATE bus_topics SET next_offset = ? WHERE topic = ?",
                (first + len(records), topic),
            )

        await self._db.write(write)
        await self._appended.notify()

    def consumer(self, group_id: str, topics: Sequence[str]) -> SqliteConsumer:
        """The group's consumer of `topics`; it starts at the group's committed offsets."""
        if not group_id or not topics:
            raise ValueError("a consumer needs a group id and at least one topic")
        if group_id in self._active_groups:
            raise ValueError(f"consumer group {group_id!r} already has an open consumer")
        self._active_groups.add(group_id)
        return SqliteConsumer(
            self,
            self._db,
            group_id,
            topics,
            signal=self._appended,
            release=lambda: self._active_groups.discard(group_id),
        )

    async def end_offsets(self, topics: Sequence[str]) -> dict[str, int]:
        """Per topic, the offset the next published record will get (0: empty topic)."""

        def read(conn: sqlite3.Connection) -> dict[str, int]:
            rows = conn.execute(
                "SELECT topic, next_offset FROM bus_topics "
                "WHERE topic IN (SELECT value FROM json_each(?))",
                (json.dumps(list(topics)),),
            ).fetchall()
            found = dict(rows)
            return {topic: int(found.get(topic, 0)) for topic in topics}

        return await self._db.read(read)

    async def committed(self, group_id: str, topics: Sequence[str]) -> dict[str, int]:
        """Per topic, the group's committed offset (the next record to process)."""

        def read(conn: sqlite3.Connection) -> dict[str, int]:
            return _committed(conn, group_id, topics)

        return await self._db.read(read)

    async def lag(self, group_id: str, topics: Sequence[str]) -> dict[str, int]:
        """Per topic, how many records the group has not committed yet."""
        ends = await self.end_offsets(topics)
        done = await self.committed(group_id, topics)
        return {topic: max(0, ends[topic] - done[topic]) for topic in topics}

    async def workspace_lag(self, group_id: str, topics: Sequence[str], workspace: str) -> int:
        """How many records keyed `workspace/...` the group has not committed yet."""
        prefix = f"{workspace}/"

        def read(conn: sqlite3.Connection) -> int:
            done = _committed(conn, group_id, topics)
            return sum(
                conn.execute(
                    "SELECT count(*) FROM bus_records WHERE topic = ? AND offset >= ? "
                    "AND substr(key, 1, ?) = ?",
                    (topic, done[topic], len(prefix), prefix),
                ).fetchone()[0]
                for topic in dict.fromkeys(topics)
            )

        return await self._db.read(read)

    async def prune_consumed(self, topics: Sequence[str]) -> int:
        """Deletes the records that every group reading a topic has committed; returns how
        many. Offsets stay as they were (the next offset is kept per topic). A topic no
        group has committed yet keeps everything."""

        def write(conn: sqlite3.Connection) -> int:
            deleted = 0
            for topic in dict.fromkeys(topics):
                (floor,) = conn.execute(
                    "SELECT min(offset) FROM bus_offsets WHERE topic = ? AND partition = ?",
                    (topic, PARTITION),
                ).fetchone()
                if floor is not None:
                    cursor = conn.execute(
                        "DELETE FROM bus_records WHERE topic = ? AND offset < ?", (topic, floor)
                    )
                    deleted += cursor.rowcount
            return deleted

        return await self._db.write(write)


def _committed(conn: sqlite3.Connection, group_id: str, topics: Sequence[str]) -> dict[str, int]:
    rows = conn.execute(
        "SELECT topic, offset FROM bus_offsets WHERE group_id = ? AND partition = ? "
        "AND topic IN (SELECT value FROM json_each(?))",
        (group_id, PARTITION, json.dumps(list(topics))),
    ).fetchall()
    found = dict(rows)
    return {topic: int(found.get(topic, 0)) for topic in topics}


class SqliteConsumer:
    """One consumer-group member over the embedded log (see SqliteEventLog.consumer)."""

    def __init__(
        self,
        log: SqliteEventLog,
        db: Database,
        group_id: str,
        topics: Sequence[str],
        *,
        signal: _AppendSignal,
        release: Callable[[], None],
    ) -> None:
        self._log = log
        self._db = db
        self._signal = signal
        self._release = release
        self.group_id = group_id
        self.topics = tuple(dict.fromkeys(topics))
        self._positions: dict[str, int] | None = None
        self._next_topic = 0
        self._closed = False

    @property
    def positions(self) -> dict[str, int]:
        """Per topic, the offset the next poll starts at (empty before the first poll)."""
        return dict(self._positions or {})

    async def poll(self, max_records: int, timeout: float) -> list[BusRecord]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(0.0, timeout)
        while not self._closed and max_records > 0:
            seen = self._signal.count
            records = await self._fetch(max_records)
            if records:
                return records
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await self._signal.wait(seen, min(remaining, self._log.poll_interval))
        return []

    async def _fetch(self, max_records: int) -> list[BusRecord]:
        if self._positions is None:
            self._positions = await self._log.committed(self.group_id, self.topics)
        # Start at a different topic each poll, so a busy topic cannot starve the others.
        start = self._next_topic % len(self.topics)
        self._next_topic += 1
        order = self.topics[start:] + self.topics[:start]
        positions = dict(self._positions)

        def read(conn: sqlite3.Connection) -> list[BusRecord]:
            found: list[BusRecord] = []
            for topic in order:
                rows = conn.execute(
                    "SELECT offset, key, value, headers, ts FROM bus_records "
                    "WHERE topic = ? AND offset >= ? ORDER BY offset LIMIT ?",
                    (topic, positions[topic], max_records - len(found)),
                ).fetchall()
                found += [
                    BusRecord(topic, PARTITION, off, key, value, _decode_headers(h), ts)
                    for off, key, value, h, ts in rows
                ]
                if len(found) >= max_records:
                    break
            return found

        records = await self._db.read(read)
        for record in records:
            self._positions[record.topic] = record.offset + 1
        return records

    async def lag(self) -> dict[tuple[str, int], int]:
        """Per (topic, partition), how many records the group has not committed yet."""
        lag = await self._log.lag(self.group_id, self.topics)
        return {(topic, PARTITION): count for topic, count in lag.items()}

    async def commit(self, records: Sequence[BusRecord]) -> None:
        """Durably stores, per topic, the highest offset + 1; commits never move back."""
        ends: dict[str, int] = {}
        for record in records:
            if record.topic not in self.topics or record.partition != PARTITION:
                raise ValueError(
                    f"record {record.topic}[{record.partition}]@{record.offset} is not "
                    f"from this consumer's topics {self.topics}"
                )
            ends[record.topic] = max(ends.get(record.topic, 0), record.offset + 1)
        if not ends:
            return

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO bus_offsets (group_id, topic, partition, offset) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (group_id, topic, partition) "
                "DO UPDATE SET offset = max(offset, excluded.offset)",
                [(self.group_id, topic, PARTITION, end) for topic, end in ends.items()],
            )

        await self._db.write(write)

    async def close(self) -> None:
        """Ends the membership (a pending poll returns empty); uncommitted work is redelivered."""
        if self._closed:
            return
        self._closed = True
        self._release()
        await self._signal.notify()  # ends a poll waiting in this process


async def open_sqlite_bus(db: Database) -> Bus:
    """The embedded bus of one data directory."""
    log = await SqliteEventLog.open(db)

    async def pending(group_id: str, topics: Sequence[str], workspace: str | None = None) -> int:
        if workspace is not None:
            return await log.workspace_lag(group_id, topics, workspace)
        return sum((await log.lag(group_id, topics)).values())

    return Bus(publisher=log, consumer=log.consumer, pending=pending)
