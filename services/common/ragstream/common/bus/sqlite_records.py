"""How the embedded log lays out its records: the partition of a key, a process's share of
the partitions, the (topic, partition) a record belongs to, its stored headers, and the
signal that wakes a process's waiting consumers. Shared by the log (bus/sqlite_log.py) and
its consumers (bus/sqlite_consumer.py)."""

from __future__ import annotations

import asyncio
import base64
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

from ragstream.common import json_text


@dataclass(frozen=True, slots=True)
class Membership:
    """Which of a group's processes this is: member `index` of `count`."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.count:
            raise ValueError(f"member {self.index} of {self.count} does not exist")

    def owns(self, partition: int) -> bool:
        return partition % self.count == self.index


ALONE = Membership()
"""The only member: one process reads every partition."""


def partition_of(key: str, partitions: int) -> int:
    """The partition of a key: the same in every process and every run."""
    return zlib.crc32(key.encode()) % partitions


def encode_headers(headers: Sequence[tuple[str, bytes]]) -> str:
    return json_text.dumps([[name, base64.b64encode(value).decode()] for name, value in headers])


def decode_headers(text: str) -> tuple[tuple[str, bytes], ...]:
    return tuple((name, base64.b64decode(value)) for name, value in json_text.loads(text))


class AppendSignal:
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


Slot = tuple[str, int]
"""A (topic, partition)."""
