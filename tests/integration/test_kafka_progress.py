"""Indexing progress per workspace on the real broker: only the records keyed `workspace/...`
between the group's committed offsets and the ends count; without a workspace, all do; a scan
cut short by its limits counts what it left unread (an upper bound, never a false zero)."""

from __future__ import annotations

import uuid

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from ragstream.common.bus.kafka import KafkaBus, open_kafka_bus
from ragstream.common.bus.kafka_progress import count_keyed, group_lag
from ragstream.common.bus.kafka_security import kafka_options
from ragstream.common.bus.progress import indexing_progress
from ragstream.common.bus.protocols import BusRecord, OutgoingRecord
from ragstream.common.bus.topics import Topics
from ragstream.common.config import Settings
from tests.support.kafka_secured import KafkaListener

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def test_progress_counts_only_the_workspaces_queued_records(
    kafka_listener: KafkaListener,
) -> None:
    cfg = kafka_listener.bus(topic_prefix=f"p{uuid.uuid4().hex[:12]}", partitions=3)
    bus = await open_kafka_bus(Settings(bus=cfg))
    topics, group = Topics(cfg.topic_prefix), f"g-{uuid.uuid4().hex}"
    records = [OutgoingRecord(f"alpha/doc-{n}", b"v") for n in range(7)]
    records += [OutgoingRecord(f"beta/doc-{n}", b"v") for n in range(4)]
    records.append(OutgoingRecord("alphabet/doc-0", b"v"))  # a longer name, not alpha's
    options = kafka_options(cfg)
    try:
        await bus.publisher.publish(topics.documents, records)
        await bus.publisher.publish(topics.graph_merge, [OutgoingRecord("beta/k", b"m")])
        alpha = await indexing_progress(bus, topics, group, "alpha")
        beta = await indexing_progress(bus, topics, group, "beta")
        total = await indexing_progress(bus, topics, group)
        assert (alpha.documents, alpha.merges) == (7, 0)
        assert (beta.documents, beta.merges) == (4, 1)
        assert (total.documents, total.merges) == (12, 1)

        consumer = bus.consumer(group, [topics.documents])
        done: list[BusRecord] = []
        while len(done) < len(records):
            done += await consumer.poll(100, timeout=1.0)
        await consumer.commit([r for r in done if not r.key.startswith("alpha/")])
        # Committing a partition commits what precedes the record too.
        left = await group_lag(options, group, [topics.documents], "alpha")
        assert 0 <= left <= 7
        await consumer.commit(done)
        assert await group_lag(options, group, [topics.documents], "alpha") == 0
        assert await group_lag(options, group, [topics.documents], None) == 0
    finally:
        await bus.close()


async def test_a_scan_cut_short_counts_what_it_left_unread(kafka_listener: KafkaListener) -> None:
    cfg = kafka_listener.bus(topic_prefix=f"p{uuid.uuid4().hex[:12]}", partitions=1)
    bus = await KafkaBus.open(cfg, 1_000_000)
    topic = Topics(cfg.topic_prefix).documents
    reader = AIOKafkaConsumer(topic, **bus.options.client(enable_auto_commit=False))
    try:
        await bus.publisher.publish(topic, [OutgoingRecord(f"b/{n}", b"v") for n in range(30)])
        await reader.start()
        spans = {TopicPartition(topic, 0): (0, 30)}
        assert await count_keyed(reader, spans, b"a/") == 0
        bounded = await count_keyed(reader, spans, b"a/", max_records=1)
        assert 0 < bounded <= 30
    finally:
        await reader.stop()
        await bus.close()
