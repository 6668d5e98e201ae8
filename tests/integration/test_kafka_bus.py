"""The Kafka event bus on the real broker beyond the bus contract (tests/contract/
bus_contract.py): topic creation, commits per partition, lag, and the rebalance listener
(drain, then abandon)."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from ragstream.common.bus.kafka import KafkaBus
from ragstream.common.bus.kafka_consumer import KafkaConsumer
from ragstream.common.bus.kafka_security import kafka_options
from ragstream.common.bus.protocols import BusRecord, OutgoingRecord
from ragstream.common.bus.topics import Topics
from ragstream.common.config import BusConfig

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
TRACEPARENT = b"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def bus_config(bootstrap: str, partitions: int = 3) -> BusConfig:
    return BusConfig(
        backend="kafka",
        kafka_bootstrap=bootstrap,
        topic_prefix=f"t{uuid.uuid4().hex[:12]}",
        partitions=partitions,
    )


async def poll_until(consumer: KafkaConsumer, count: int, timeout: float = 30) -> list[BusRecord]:
    got: list[BusRecord] = []
    async with asyncio.timeout(timeout):
        while len(got) < count:
            got += await consumer.poll(100, timeout=0.5)
    return got


async def committed(bootstrap: str, group: str) -> dict[int, int]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {tp.partition: meta.offset for tp, meta in offsets.items()}


async def topic_layout(bootstrap: str, topics: list[str]) -> dict[str, tuple[int, str]]:
    """Per topic: partition count and its max.message.bytes. A topic just created may be
    described for a moment without its partitions (the broker's metadata catching up): read
    again until every topic has some, for at most 10 s."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        described = await admin.describe_topics(topics)
        async with asyncio.timeout(10):
            while not all(t["partitions"] for t in described):
                await asyncio.sleep(0.1)
                described = await admin.describe_topics(topics)
        configs = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        )
    finally:
        await admin.close()
    sizes = {
        resource[3]: dict((entry[0], entry[1]) for entry in resource[4])["max.message.bytes"]
        for response in configs
        for resource in response.resources
    }
    return {t["topic"]: (len(t["partitions"]), sizes[t["topic"]]) for t in described}


async def test_topics_are_created_once_with_the_configured_partitions(
    kafka_broker: KafkaEndpoint,
) -> None:
    cfg = bus_config(kafka_broker.bootstrap, partitions=3)
    bus = await KafkaBus.open(cfg, max_document_bytes=2_000_000)
    await bus.close()
    topics = Topics(cfg.topic_prefix)
    names = [topics.documents, topics.graph_merge, topics.documents_dlt]
    layout = await topic_layout(kafka_broker.bootstrap, names)
    assert layout[topics.documents] == (3, str(bus.max_event_bytes))
    assert layout[topics.documents_dlt] == (3, str(bus.max_event_bytes))
    assert layout[topics.graph_merge][0] == 3
    # A second process opening the bus finds them and changes nothing.
    again = await KafkaBus.open(cfg.model_copy(update={"partitions": 5}), 2_000_000)
    await again.close()
    assert (await topic_layout(kafka_broker.bootstrap, names)) == layout


async def test_commit_is_per_partition_and_uncommitted_records_come_again(
    kafka_broker: KafkaEndpoint,
) -> None:
    cfg = bus_config(kafka_broker.bootstrap)
    bus = await KafkaBus.open(cfg, 1_000_000)
    topic, group = Topics(cfg.topic_prefix).documents, f"g-{uuid.uuid4().hex}"
    try:
        await bus.publisher.publish(topic, [OutgoingRecord(f"ws/d{n}", b"x") for n in range(30)])
        first = bus.consumer(group, [topic])
        got = await poll_until(first, 30)
        assert sum((await first.lag()).values()) == 30
        done = [r for r in got if r.offset < 4]  # the first records of every partition
        await first.commit(done)
        lag = await first.lag()
        await first.close()
        ends = {p: max(r.offset for r in got if r.partition == p) + 1 for p in lag_parts(lag)}
        expected = {p: max(r.offset for r in done if r.partition == p) + 1 for p in ends}
        assert await committed(kafka_broker.bootstrap, group) == expected
        assert lag == {(topic, p): ends[p] - expected[p] for p in ends}

        second = bus.consumer(group, [topic])
        again = await poll_until(second, 30 - len(done))
        assert sorted((r.partition, r.offset) for r in again) == sorted(
            (r.partition, r.offset) for r in got if r not in done
        )
    finally:
        await bus.close()


def lag_parts(lag: dict[tuple[str, int], int]) -> list[int]:
    return [partition for _, partition in lag]


async def test_rebalance_waits_for_the_batch_in_flight_to_commit(
    kafka_broker: KafkaEndpoint,
) -> None:
    cfg = bus_config(kafka_broker.bootstrap, partitions=2)
    bus = await KafkaBus.open(cfg, 1_000_000)
    topic, group = Topics(cfg.topic_prefix).documents, f"g-{uuid.uuid4().hex}"
    first = KafkaConsumer(kafka_options(cfg), group, [topic], drain_timeout_s=20)
    second = KafkaConsumer(kafka_options(cfg), group, [topic], drain_timeout_s=20)
    try:
        await bus.publisher.publish(topic, [OutgoingRecord(f"ws/d{n}", b"x") for n in range(20)])
        batch = await poll_until(first, 20)
        joining = asyncio.create_task(poll_until(second, 1, timeout=60))
        await asyncio.sleep(3)  # the rebalance has started and waits for `first`
        assert not joining.done()
        await first.commit(batch)
        # `second` got partitions only after the commit, so it finds nothing to redo.
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.shield(joining), 5)
        joining.cancel()
        assert await committed(kafka_broker.bootstrap, group) == {
            p: max(r.offset for r in batch if r.partition == p) + 1 for p in (0, 1)
        }
    finally:
        await first.close()
        await second.close()
        await bus.close()


async def test_rebalance_abandons_a_batch_that_does_not_finish(
    kafka_broker: KafkaEndpoint,
) -> None:
    cfg = bus_config(kafka_broker.bootstrap, partitions=2)
    bus = await KafkaBus.open(cfg, 1_000_000)
    topic, group = Topics(cfg.topic_prefix).documents, f"g-{uuid.uuid4().hex}"
    first = KafkaConsumer(kafka_options(cfg), group, [topic], drain_timeout_s=2)
    second = KafkaConsumer(kafka_options(cfg), group, [topic], drain_timeout_s=2)
    abandoned = asyncio.Event()
    first.on_abandon(abandoned.set)
    try:
        await bus.publisher.publish(topic, [OutgoingRecord(f"ws/d{n}", b"x") for n in range(20)])
        batch = await poll_until(first, 20)
        await second.poll(1, timeout=0.1)  # joins the group: a rebalance starts
        await asyncio.wait_for(abandoned.wait(), 20)
        # The owner of the batch lets go (polls again, committing nothing); after the
        # rebalance, each member reads its partition from the last commit: from the start.
        again: list[BusRecord] = []
        async with asyncio.timeout(30):
            while len(again) < len(batch):
                again += await first.poll(100, timeout=0.2)
                again += await second.poll(100, timeout=0.2)
        assert sorted((r.partition, r.offset) for r in again) == sorted(
            (r.partition, r.offset) for r in batch
        )
        assert await committed(kafka_broker.bootstrap, group) == {}
    finally:
        await first.close()
        await second.close()
        await bus.close()
