"""The test broker behaves as the event bus relies on: keyed records keep their partition and
order, the idempotent producer is accepted, and a group's manual commit is stored."""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from typing import TYPE_CHECKING

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

KEYS = [f"ws/doc-{n}" for n in range(7)]
RECORDS = [(KEYS[n % len(KEYS)], f"v{n}".encode()) for n in range(60)]


async def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, replication_factor=1)])
    finally:
        await admin.close()


async def produce(bootstrap: str, topic: str) -> dict[str, set[int]]:
    """Sends RECORDS one by one; returns the partitions each key landed in."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, enable_idempotence=True, acks="all")
    await producer.start()
    placed: dict[str, set[int]] = defaultdict(set)
    try:
        for key, value in RECORDS:
            meta = await producer.send_and_wait(topic, value, key=key.encode())
            placed[key].add(meta.partition)
        assert await producer.partitions_for(topic) == {0, 1, 2}
    finally:
        await producer.stop()
    return placed


async def consume_all(
    consumer: AIOKafkaConsumer, expected: int, timeout: float = 30.0
) -> list[tuple[str, bytes, int, int]]:
    """(key, value, partition, offset) of the records, until `expected` of them came."""
    got: list[tuple[str, bytes, int, int]] = []
    async with asyncio.timeout(timeout):
        while len(got) < expected:
            batches = await consumer.getmany(timeout_ms=500)
            for records in batches.values():
                for r in records:
                    assert r.key is not None and r.value is not None
                    got.append((r.key.decode(), r.value, r.partition, r.offset))
    return got


async def committed_offsets(bootstrap: str, group: str) -> dict[int, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {tp.partition: meta.offset for tp, meta in offsets.items()}


async def test_keyed_records_round_trip_with_manual_commit(kafka_broker: KafkaEndpoint) -> None:
    bootstrap = kafka_broker.bootstrap
    # The broker is shared by the whole session: names of this test's own.
    topic, group = f"smoke-{uuid.uuid4().hex}", f"smoke-group-{uuid.uuid4().hex}"
    await create_topic(bootstrap, topic, partitions=3)

    placed = await produce(bootstrap, topic)
    assert all(len(partitions) == 1 for partitions in placed.values()), placed
    assert len({p for ps in placed.values() for p in ps}) > 1, "7 keys all hashed to one partition"

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        got = await consume_all(consumer, expected=len(RECORDS))
        await consumer.commit()
        ends = await consumer.end_offsets([TopicPartition(topic, p) for p in range(3)])
    finally:
        await consumer.stop()

    assert sorted((k, v) for k, v, _, _ in got) == sorted(RECORDS)
    for key in KEYS:  # per-key order is what the indexer depends on
        assert [v for k, v, _, _ in got if k == key] == [v for k, v in RECORDS if k == key]
    end_by_partition = {tp.partition: offset for tp, offset in ends.items()}
    assert sum(end_by_partition.values()) == len(RECORDS)
    assert await committed_offsets(bootstrap, group) == end_by_partition

    # A new member of the group resumes at the commit: nothing is delivered twice.
    again = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group)
    await again.start()
    try:
        async with asyncio.timeout(30):
            while len(again.assignment()) < 3:
                assert await again.getmany(timeout_ms=200) == {}
        positions = {tp.partition: await again.position(tp) for tp in again.assignment()}
        assert positions == end_by_partition
        assert await again.getmany(timeout_ms=500) == {}
    finally:
        await again.stop()
