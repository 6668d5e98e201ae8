"""The event bus, as the indexer and the ingest API use it.

Delivery is at-least-once: a consumer commits a record only after the writes it caused
succeeded, so after a crash the uncommitted records are delivered again, and the
idempotent indexing stages make that harmless.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class OutgoingRecord:
    key: str
    """Partitioning key: `workspace/doc_id` for documents; per-key order is preserved."""
    value: bytes | None
    """None is a tombstone (the document is deleted)."""
    headers: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True, slots=True)
class BusRecord:
    topic: str
    partition: int
    offset: int
    key: str
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp: float = 0.0
    """When the record was appended (epoch seconds)."""

    def header(self, name: str) -> bytes | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None


class Publisher(Protocol):
    async def publish(self, topic: str, records: Sequence[OutgoingRecord]) -> None:
        """Append records; durable when this returns."""
        ...


class Consumer(Protocol):
    """One member of a consumer group reading some topics."""

    async def poll(self, max_records: int, timeout: float) -> list[BusRecord]:
        """The next records after the last polled ones (empty on timeout)."""
        ...

    async def commit(self, records: Sequence[BusRecord]) -> None:
        """Mark these records (and everything before them in their partitions) as done."""
        ...

    async def close(self) -> None: ...


class Pending(Protocol):
    async def __call__(
        self, group_id: str, topics: Sequence[str], workspace: str | None = None
    ) -> int:
        """Records of `topics` the consumer group has not committed yet: all of them
        (workspace None), or those of one workspace (keys `workspace/...`)."""
        ...


async def _nothing_to_close() -> None:
    return None


@dataclass(frozen=True, slots=True)
class Bus:
    """An opened event bus: its publisher, a consumer factory and the backlog of a group."""

    publisher: Publisher
    consumer: Callable[[str, Sequence[str]], Consumer]
    """Makes a consumer for (group id, topics)."""
    pending: Pending
    """The backlog of a consumer group, in all workspaces or in one."""
    pending_poll_s: float = 0.2
    """How often a stage waiting for a backlog reads `pending`: Kafka's read starts clients
    and asks the brokers; the embedded bus's is one small query, and sets a shorter one."""
    close: Callable[[], Awaitable[None]] = _nothing_to_close
    """Releases the bus's connections (after the consumers it made are closed)."""
