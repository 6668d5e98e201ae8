"""The event-bus contract: what the indexing stages rely on, run against every bus.

A subclass provides two fixtures: `bus` (an opened `Bus`) and `topics` (the `Topics` it
created). Everything here goes through the `Bus` surface the stages use: the publisher, the
consumer factory and `pending`. Order is promised per key only (Kafka partitions by key).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import defaultdict

from ragstream.common.bus.protocols import Bus, BusRecord, Consumer, OutgoingRecord
from ragstream.common.bus.topics import Topics

TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def poll_until(consumer: Consumer, count: int, timeout_s: float = 30) -> list[BusRecord]:
    """Polls until `count` records arrived (a Kafka member first joins its group)."""
    got: list[BusRecord] = []
    async with asyncio.timeout(timeout_s):
        while len(got) < count:
            got += await consumer.poll(100, 0.5)
    return got


def group() -> str:
    return f"g-{uuid.uuid4().hex[:12]}"


def records(count: int, keys: int = 5) -> list[OutgoingRecord]:
    return [OutgoingRecord(f"ws/doc-{n % keys}", f"v{n}".encode()) for n in range(count)]


def later_half(got: list[BusRecord]) -> tuple[list[BusRecord], list[BusRecord]]:
    """(committed, left): per partition, the first half of its records and the rest."""
    by_partition: dict[tuple[str, int], list[BusRecord]] = defaultdict(list)
    for record in got:
        by_partition[(record.topic, record.partition)].append(record)
    done: list[BusRecord] = []
    for part in by_partition.values():
        part.sort(key=lambda r: r.offset)
        done += part[: len(part) // 2]
    return done, [r for r in got if r not in done]


class BusContract:
    async def test_a_keys_records_come_back_in_order_with_headers_and_tombstones(
        self, bus: Bus, topics: Topics
    ) -> None:
        sent = [
            OutgoingRecord(f"ws/doc-{n % 4}", f"v{n}".encode(), (("traceparent", TRACEPARENT),))
            for n in range(20)
        ]
        sent.append(OutgoingRecord("ws/doc-0", None))
        before = time.time()
        await bus.publisher.publish(topics.documents, sent)
        consumer = bus.consumer(group(), [topics.documents])
        try:
            got = await poll_until(consumer, len(sent))
        finally:
            await consumer.close()
        by_key: dict[str, list[BusRecord]] = defaultdict(list)
        for record in got:
            by_key[record.key].append(record)
        for key, found in by_key.items():
            assert [r.value for r in found] == [r.value for r in sent if r.key == key]
            assert [r.offset for r in found] == sorted(r.offset for r in found)
        assert by_key["ws/doc-0"][-1].value is None
        live = [r for r in got if r.value is not None]
        assert all(r.header("traceparent") == TRACEPARENT for r in live)
        assert all(r.topic == topics.documents for r in got)
        assert all(before - 60 < r.timestamp <= time.time() + 60 for r in got)

    async def test_a_new_member_gets_exactly_what_its_group_did_not_commit(
        self, bus: Bus, topics: Topics
    ) -> None:
        await bus.publisher.publish(topics.documents, records(24))
        name = group()
        first = bus.consumer(name, [topics.documents])
        got = await poll_until(first, 24)
        done, left = later_half(got)
        await first.commit(done)
        await first.close()
        second = bus.consumer(name, [topics.documents])
        try:
            again = await poll_until(second, len(left))
        finally:
            await second.close()
        key = lambda r: (r.partition, r.offset)  # noqa: E731
        assert sorted(map(key, again)) == sorted(map(key, left))

    async def test_pending_counts_what_a_group_has_not_committed(
        self, bus: Bus, topics: Topics
    ) -> None:
        name = group()
        assert await bus.pending(name, [topics.documents]) == 0
        await bus.publisher.publish(topics.documents, records(10))
        assert await bus.pending(name, [topics.documents]) == 10
        consumer = bus.consumer(name, [topics.documents])
        try:
            got = await poll_until(consumer, 10)
            done, _ = later_half(got)
            await consumer.commit(done)
            assert await bus.pending(name, [topics.documents]) == 10 - len(done)
            await consumer.commit(got)
            assert await bus.pending(name, [topics.documents]) == 0
        finally:
            await consumer.close()
        assert await bus.pending(group(), [topics.documents]) == 10  # another group: all

    async def test_pending_of_a_workspace_counts_its_keys_only(
        self, bus: Bus, topics: Topics
    ) -> None:
        name = group()
        keys = ["alpha/a", "beta/b", "alpha/c", "alphabet/d", "alpha/e", "beta/f"]
        await bus.publisher.publish(topics.documents, [OutgoingRecord(k, b"v") for k in keys])
        assert await bus.pending(name, [topics.documents], "alpha") == 3
        assert await bus.pending(name, [topics.documents], "alphabet") == 1
        assert await bus.pending(name, [topics.documents], "gamma") == 0
        consumer = bus.consumer(name, [topics.documents])
        try:
            await consumer.commit(await poll_until(consumer, len(keys)))
        finally:
            await consumer.close()
        assert await bus.pending(name, [topics.documents], "alpha") == 0

    async def test_groups_and_topics_are_independent(self, bus: Bus, topics: Topics) -> None:
        await bus.publisher.publish(topics.documents, records(6))
        one, other = group(), group()
        first = bus.consumer(one, [topics.documents])
        try:
            await first.commit(await poll_until(first, 6))
        finally:
            await first.close()
        second = bus.consumer(other, [topics.documents])
        try:
            assert len(await poll_until(second, 6)) == 6
        finally:
            await second.close()
        merges = bus.consumer(one, [topics.graph_merge])
        try:
            assert await merges.poll(100, 1.0) == []
        finally:
            await merges.close()
        assert await bus.pending(one, [topics.graph_merge]) == 0

    async def test_a_poll_returns_at_most_its_limit_and_an_empty_one_waits(
        self, bus: Bus, topics: Topics
    ) -> None:
        await bus.publisher.publish(topics.documents, records(7, keys=1))
        consumer = bus.consumer(group(), [topics.documents])
        try:
            got: list[BusRecord] = []
            async with asyncio.timeout(30):
                while len(got) < 7:
                    batch = await consumer.poll(3, 0.5)
                    assert len(batch) <= 3
                    got += batch
            assert [r.value for r in got] == [f"v{n}".encode() for n in range(7)]
            started = time.monotonic()
            assert await consumer.poll(10, 0.5) == []
            assert 0.4 <= time.monotonic() - started < 5.0
        finally:
            await consumer.close()
