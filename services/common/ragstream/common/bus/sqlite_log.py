"""The embedded event bus: an append-only log per topic in the shared SQLite database.

A topic has a fixed number of partitions, set when its first record is published (the
log's `partitions`; a topic created before partitions existed has one). A record goes to
the partition its key hashes to (CRC-32), so one key's records stay in order. Offsets are
numbered per partition, as Kafka numbers them, and only grow (the next offset is kept per
partition, so offsets are never reused, and a group's backlog in a partition is the next
offset minus its committed one). A consumer group stores, per (topic, partition), the offset
of the next record to process; a consumer starts there, so after a crash the records polled
but not committed are delivered again (at-least-once), and committed ones never.

Several processes share a group by static membership: the log of member `m` of `members`
(`Membership`) makes consumers that read the partitions p with p % members == m, so each
partition has one reader. Within a process a group has one consumer at a time.

A consumer waiting in `poll` is woken at once by a publish through the same
SqliteEventLog (same process), and notices other processes' appends within
`poll_interval` seconds.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence

from ragstream.common.bus.protocols import Bus, OutgoingRecord
from ragstream.common.bus.sqlite_consumer import SqliteConsumer
from ragstream.common.bus.sqlite_records import (
    ALONE,
    AppendSignal,
    Membership,
    Slot,
    encode_headers,
    partition_of,
)
from ragstream.common.storage.sqlite.db import Database, Migration

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
    (
        # Partitions: a topic's count, each partition's next offset, records keyed by both.
        # Existing topics become one partition 0 holding their records and offsets as they were.
        "ALTER TABLE bus_topics ADD COLUMN partitions INTEGER NOT NULL DEFAULT 1",
        "CREATE TABLE bus_partitions (topic TEXT NOT NULL, partition INTEGER NOT NULL, "
        "next_offset INTEGER NOT NULL, PRIMARY KEY (topic, partition)) WITHOUT ROWID",
        "INSERT INTO bus_partitions (topic, partition, next_offset) "
        "SELECT topic, 0, next_offset FROM bus_topics",
        "CREATE TABLE bus_partition_records (topic TEXT NOT NULL, partition INTEGER NOT NULL, "
        "offset INTEGER NOT NULL, key TEXT NOT NULL, value BLOB, headers TEXT NOT NULL, "
        "ts REAL NOT NULL, PRIMARY KEY (topic, partition, offset)) WITHOUT ROWID",
        "INSERT INTO bus_partition_records (topic, partition, offset, key, value, headers, ts) "
        "SELECT topic, 0, offset, key, value, headers, ts FROM bus_records",
        "DROP TABLE bus_records",
        "ALTER TABLE bus_partition_records RENAME TO bus_records",
    ),
)


class SqliteEventLog:
    """Publisher over the log, and the factory of its consumers.

    Create with `await SqliteEventLog.open(db)`; share one instance per process so that
    publishes wake local consumers immediately. `partitions`: how many a topic gets when
    this log creates it; `member`: which partitions this process's consumers read.
    """

    def __init__(
        self,
        db: Database,
        *,
        poll_interval: float = 0.1,
        partitions: int = 1,
        member: Membership = ALONE,
    ) -> None:
        if partitions < 1:
            raise ValueError("a topic needs at least one partition")
        self._db = db
        self.poll_interval = poll_interval
        self.partitions = partitions
        self.member = member
        self._appended = AppendSignal()
        self._active_groups: set[str] = set()
        self._known: dict[str, int] = {}
        """Partition counts of existing topics (fixed once a topic exists)."""

    @classmethod
    async def open(
        cls,
        db: Database,
        *,
        poll_interval: float = 0.1,
        partitions: int = 1,
        member: Membership = ALONE,
    ) -> SqliteEventLog:
        await db.migrate("bus", MIGRATIONS)
        return cls(db, poll_interval=poll_interval, partitions=partitions, member=member)

    async def publish(self, topic: str, records: Sequence[OutgoingRecord]) -> None:
        """Appends in order, in one transaction; durable (committed) when this returns."""
        if not topic:
            raise ValueError("topic must not be empty")
        if not records:
            return
        now = time.time()

        def encode() -> list[str]:
            return [encode_headers(r.headers) for r in records]

        def write(conn: sqlite3.Connection, headers: list[str]) -> None:
            conn.execute(
                "INSERT INTO bus_topics (topic, next_offset, partitions) VALUES (?, 0, ?) "
                "ON CONFLICT (topic) DO NOTHING",
                (topic, self.partitions),
            )
            (partitions,) = conn.execute(
                "SELECT partitions FROM bus_topics WHERE topic = ?", (topic,)
            ).fetchone()
            by_partition: dict[int, list[tuple[OutgoingRecord, str]]] = {}
            for record, encoded in zip(records, headers, strict=True):
                partition = partition_of(record.key, partitions)
                by_partition.setdefault(partition, []).append((record, encoded))
            rows = []
            for partition, appended in by_partition.items():
                found = conn.execute(
                    "SELECT next_offset FROM bus_partitions WHERE topic = ? AND partition = ?",
                    (topic, partition),
                ).fetchone()
                first = found[0] if found else 0
                rows += [
                    (topic, partition, first + i, r.key, r.value, encoded, now)
                    for i, (r, encoded) in enumerate(appended)
                ]
                conn.execute(
                    "INSERT INTO bus_partitions (topic, partition, next_offset) VALUES (?, ?, ?) "
                    "ON CONFLICT (topic, partition) "
                    "DO UPDATE SET next_offset = excluded.next_offset",
                    (topic, partition, first + len(appended)),
                )
            conn.executemany(
                "INSERT INTO bus_records (topic, partition, offset, key, value, headers, ts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute(
                "UPDATE bus_topics SET next_offset = next_offset + ? WHERE topic = ?",
                (len(records), topic),
            )

        await self._db.write_prepared(encode, write)
        await self._appended.notify()

    def consumer(self, group_id: str, topics: Sequence[str]) -> SqliteConsumer:
        """The group's consumer of `topics` (this process's partitions of them); it starts
        at the group's committed offsets."""
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

    async def topic_partitions(self, topics: Sequence[str]) -> dict[str, int]:
        """Per topic that exists, its partition count (a topic not yet published to is
        left out: its count is set by its first publish)."""
        missing = [topic for topic in topics if topic not in self._known]
        if missing:

            def read(conn: sqlite3.Connection) -> list[tuple[str, int]]:
                return conn.execute(
                    "SELECT topic, partitions FROM bus_topics "
                    "WHERE topic IN (SELECT value FROM json_each(?))",
                    (json.dumps(missing),),
                ).fetchall()

            self._known.update(await self._db.read(read))
        return {topic: self._known[topic] for topic in topics if topic in self._known}

    async def end_offsets(self, topics: Sequence[str]) -> dict[str, int]:
        """Per topic, how many records were ever published to it (0: no topic yet)."""

        def read(conn: sqlite3.Connection) -> dict[str, int]:
            rows = conn.execute(
                "SELECT topic, next_offset FROM bus_topics "
                "WHERE topic IN (SELECT value FROM json_each(?))",
                (json.dumps(list(topics)),),
            ).fetchall()
            found = dict(rows)
            return {topic: int(found.get(topic, 0)) for topic in topics}

        return await self._db.read(read)

    async def committed(self, group_id: str, topics: Sequence[str]) -> dict[Slot, int]:
        """Per (topic, partition) of existing topics, the group's committed offset (the next
        record to process; 0 before its first commit)."""
        partitions = await self.topic_partitions(topics)

        def read(conn: sqlite3.Connection) -> dict[Slot, int]:
            return _committed(conn, group_id, partitions)

        return await self._db.read(read)

    async def lag(self, group_id: str, topics: Sequence[str]) -> dict[Slot, int]:
        """Per (topic, partition), how many records the group has not committed yet."""
        partitions = await self.topic_partitions(list(dict.fromkeys(topics)))

        def read(conn: sqlite3.Connection) -> dict[Slot, int]:
            done = _committed(conn, group_id, partitions)
            rows = conn.execute(
                "SELECT topic, partition, next_offset FROM bus_partitions "
                "WHERE topic IN (SELECT value FROM json_each(?))",
                (json.dumps(list(partitions)),),
            ).fetchall()
            ends = {(topic, partition): end for topic, partition, end in rows}
            return {slot: max(0, ends.get(slot, 0) - start) for slot, start in done.items()}

        return await self._db.read(read)

    async def workspace_lag(self, group_id: str, topics: Sequence[str], workspace: str) -> int:
        """How many records keyed `workspace/...` the group has not committed yet."""
        partitions = await self.topic_partitions(list(dict.fromkeys(topics)))
        prefix = f"{workspace}/"

        def read(conn: sqlite3.Connection) -> int:
            done = _committed(conn, group_id, partitions)
            return sum(
                conn.execute(
                    "SELECT count(*) FROM bus_records WHERE topic = ? AND partition = ? "
                    "AND offset >= ? AND substr(key, 1, ?) = ?",
                    (topic, partition, start, len(prefix), prefix),
                ).fetchone()[0]
                for (topic, partition), start in done.items()
            )

        return await self._db.read(read)

    async def prune_consumed(self, topics: Sequence[str]) -> int:
        """Deletes the records that every group reading a topic has committed; returns how
        many. Offsets stay as they were (the next offset is kept per topic). A partition no
        group has committed yet keeps everything."""

        def write(conn: sqlite3.Connection) -> int:
            floors = conn.execute(
                "SELECT topic, partition, min(offset) FROM bus_offsets "
                "WHERE topic IN (SELECT value FROM json_each(?)) GROUP BY topic, partition",
                (json.dumps(list(dict.fromkeys(topics))),),
            ).fetchall()
            return sum(
                conn.execute(
                    "DELETE FROM bus_records WHERE topic = ? AND partition = ? AND offset < ?",
                    (topic, partition, floor),
                ).rowcount
                for topic, partition, floor in floors
            )

        return await self._db.write(write)


def _committed(
    conn: sqlite3.Connection, group_id: str, partitions: dict[str, int]
) -> dict[Slot, int]:
    rows = conn.execute(
        "SELECT topic, partition, offset FROM bus_offsets WHERE group_id = ? "
        "AND topic IN (SELECT value FROM json_each(?))",
        (group_id, json.dumps(list(partitions))),
    ).fetchall()
    found = {(topic, partition): offset for topic, partition, offset in rows}
    return {
        (topic, partition): int(found.get((topic, partition), 0))
        for topic, count in partitions.items()
        for partition in range(count)
    }


async def open_sqlite_bus(db: Database, *, partitions: int = 1, member: Membership = ALONE) -> Bus:
    """The embedded bus of one data directory, as member `member` of its consumer groups."""
    log = await SqliteEventLog.open(db, partitions=partitions, member=member)

    async def pending(group_id: str, topics: Sequence[str], workspace: str | None = None) -> int:
        if workspace is not None:
            return await log.workspace_lag(group_id, topics, workspace)
        return sum((await log.lag(group_id, topics)).values())

    return Bus(publisher=log, consumer=log.consumer, pending=pending, pending_poll_s=0.05)
