"""A consumer-group member over the embedded log (bus/sqlite_log.py): it reads the partitions
its process's membership owns, from the group's committed offsets."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ragstream.common.bus.protocols import BusRecord
from ragstream.common.bus.sqlite_records import AppendSignal, Slot, decode_headers
from ragstream.common.storage.sqlite.db import Database

if TYPE_CHECKING:
    from ragstream.common.bus.sqlite_log import SqliteEventLog

log = logging.getLogger(__name__)

_Row = tuple[float, int, int, str, bytes | None, str]
"""A record as read: ts, partition, offset, key, value, headers."""


class SqliteConsumer:
    """One consumer-group member over the embedded log (see SqliteEventLog.consumer): it
    reads the partitions its log's membership owns."""

    def __init__(
        self,
        log: SqliteEventLog,
        db: Database,
        group_id: str,
        topics: Sequence[str],
        *,
        signal: AppendSignal,
        release: Callable[[], None],
    ) -> None:
        self._log = log
        self._db = db
        self._signal = signal
        self._release = release
        self.group_id = group_id
        self.topics = tuple(dict.fromkeys(topics))
        self._positions: dict[Slot, int] = {}
        """Per owned (topic, partition) of the topics that exist, the next offset to read."""
        self._next_topic = 0
        self._closed = False
        self._unowned: set[str] = set()
        """Existing topics none of whose partitions this member owns."""

    @property
    def positions(self) -> dict[Slot, int]:
        """Per (topic, partition) read so far, the offset the next poll starts at."""
        return dict(self._positions)

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

    async def _owned(self) -> None:
        """Adds the owned partitions of topics that came to exist since the last poll,
        starting at the group's committed offsets."""
        seen = {topic for topic, _ in self._positions} | self._unowned
        if len(seen) == len(self.topics):
            return
        committed = await self._log.committed(self.group_id, self.topics)
        member = self._log.member
        for (topic, partition), offset in committed.items():
            if member.owns(partition):
                self._positions.setdefault((topic, partition), offset)
        owned = {topic for topic, _ in self._positions}
        for topic in {topic for topic, _ in committed} - owned - self._unowned:
            self._unowned.add(topic)
            log.warning(
                "topic %s has fewer partitions than this group has members: "
                "member %d of %d reads none of it",
                topic,
                member.index,
                member.count,
            )

    async def _fetch(self, max_records: int) -> list[BusRecord]:
        await self._owned()
        # Start at a different topic each poll, so a busy topic cannot starve the others.
        start = self._next_topic % len(self.topics)
        self._next_topic += 1
        order = self.topics[start:] + self.topics[:start]
        positions = dict(self._positions)

        def read(conn: sqlite3.Connection) -> list[BusRecord]:
            found: list[BusRecord] = []
            for topic in order:
                # The topic's oldest records across this member's partitions, each partition's
                # in offset order, merged by the time they were appended.
                per_partition: list[list[_Row]] = [
                    conn.execute(
                        "SELECT ts, partition, offset, key, value, headers "
                        "FROM bus_records WHERE topic = ? AND partition = ? "
                        "AND offset >= ? ORDER BY offset LIMIT ?",
                        (topic, partition, offset, max_records - len(found)),
                    ).fetchall()
                    for (name, partition), offset in positions.items()
                    if name == topic
                ]
                merged = heapq.merge(*per_partition, key=lambda row: row[0])
                found += [
                    BusRecord(topic, partition, off, key, value, decode_headers(h), ts)
                    for ts, partition, off, key, value, h in itertools.islice(
                        merged, max_records - len(found)
                    )
                ]
                if len(found) >= max_records:
                    break
            return found

        records = await self._db.read(read)
        for record in records:
            self._positions[(record.topic, record.partition)] = record.offset + 1
        return records

    async def lag(self) -> dict[Slot, int]:
        """Per owned (topic, partition), how many records the group has not committed yet;
        a topic nobody has published to yet has none, in the partitions it will get."""
        member, log = self._log.member, self._log
        lag = await log.lag(self.group_id, self.topics)
        existing = {topic for topic, _ in lag}
        lag |= {
            (topic, partition): 0
            for topic in self.topics
            if topic not in existing
            for partition in range(log.partitions)
        }
        return {slot: count for slot, count in lag.items() if member.owns(slot[1])}

    async def commit(self, records: Sequence[BusRecord]) -> None:
        """Durably stores, per (topic, partition), the highest offset + 1; commits never
        move back."""
        ends: dict[Slot, int] = {}
        for record in records:
            slot = (record.topic, record.partition)
            if record.topic not in self.topics or not self._log.member.owns(record.partition):
                raise ValueError(
                    f"record {record.topic}[{record.partition}]@{record.offset} is not "
                    f"from this consumer's partitions of {self.topics}"
                )
            ends[slot] = max(ends.get(slot, 0), record.offset + 1)
        if not ends:
            return

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO bus_offsets (group_id, topic, partition, offset) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (group_id, topic, partition) "
                "DO UPDATE SET offset = max(offset, excluded.offset)",
                [(self.group_id, topic, part, end) for (topic, part), end in ends.items()],
            )

        await self._db.write(write)

    async def close(self) -> None:
        """Ends the membership (a pending poll returns empty); uncommitted work is redelivered."""
        if self._closed:
            return
        self._closed = True
        self._release()
        await self._signal.notify()  # ends a poll waiting in this process
