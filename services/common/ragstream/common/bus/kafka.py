"""The Kafka event bus (aiokafka), the distributed deployment's Publisher and Consumers.

Topics are named from `bus.topic_prefix` (topics.py) and created with `bus.partitions`
when missing; the document and dead-letter topics accept events up to the indexer's size
limit (plus room for headers), so an oversized event reaches the indexer and is
dead-lettered with the reason instead of being refused silently at the producer.

Keys are UTF-8 bytes (`workspace/doc_id` for documents), so Kafka's default partitioner
keeps each document's events in one partition, in order. The producer (kafka_publisher.py)
is idempotent with acks=all: a retried send never duplicates or reorders a partition's
records, and `publish` returns once every record is acknowledged by the in-sync replicas.

Every client connects with the options of `bus.kafka_security` (kafka_security.py). Opening
the bus retries an unreachable or refusing cluster with capped exponential backoff for
`bus.connect_retry_s`, one log line per attempt, then raises the reason.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from ragstream.common.bus.kafka_admin import (
    KafkaUnavailableError,
    TopicSpec,
    ensure_topics,
)
from ragstream.common.bus.kafka_consumer import KafkaConsumer
from ragstream.common.bus.kafka_publisher import KafkaPublisher
from ragstream.common.bus.kafka_security import kafka_options
from ragstream.common.bus.protocols import Bus
from ragstream.common.bus.topics import Topics
from ragstream.common.config import BusConfig, Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 15.0
HEADROOM_BYTES = 1 << 20
"""Room above the largest accepted document for the event's other fields and headers."""


def topic_specs(topics: Topics, partitions: int, max_event_bytes: int) -> list[TopicSpec]:
    """The bus topics, with room for the largest event on the ones that carry documents."""
    sized = {"max.message.bytes": str(max_event_bytes)}
    return [
        TopicSpec(topics.documents, partitions, sized),
        TopicSpec(topics.graph_merge, partitions),
        TopicSpec(topics.communities, partitions),
        TopicSpec(topics.documents_dlt, partitions, sized),
    ]


class KafkaBus:
    """The publisher and the consumer factory of one process; `close` ends them all."""

    def __init__(self, cfg: BusConfig, max_document_bytes: int) -> None:
        self._cfg = cfg
        self.options = kafka_options(cfg)
        self.max_event_bytes = max_document_bytes + HEADROOM_BYTES
        self.publisher = KafkaPublisher(self.options, max_request_bytes=self.max_event_bytes)
        self._consumers: list[KafkaConsumer] = []

    @classmethod
    async def open(cls, cfg: BusConfig, max_document_bytes: int) -> KafkaBus:
        """Creates the missing topics, retrying with backoff for `bus.connect_retry_s`;
        raises KafkaUnavailableError naming the problem (ConfigError for unusable files)."""
        bus = cls(cfg, max_document_bytes)
        specs = topic_specs(Topics(cfg.topic_prefix), cfg.partitions, bus.max_event_bytes)
        await retrying(lambda: ensure_topics(bus.options, specs), cfg.connect_retry_s)
        return bus

    def consumer(self, group_id: str, topics: Sequence[str]) -> KafkaConsumer:
        """A new member of `group_id`; it joins the group on its first poll."""
        consumer = KafkaConsumer(self.options, group_id, topics)
        self._consumers.append(consumer)
        return consumer

    async def close(self) -> None:
        for consumer in self._consumers:
            await consumer.close()
        await self.publisher.close()


async def retrying(attempt: Callable[[], Awaitable[T]], retry_s: float) -> T:
    """`attempt()`, again after 0.5, 1, 2, ... (at most MAX_BACKOFF_S) seconds while it raises
    KafkaUnavailableError, until `retry_s` have passed; each failure is one log line."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + retry_s
    delay = FIRST_BACKOFF_S
    while True:
        try:
            return await attempt()
        except KafkaUnavailableError as exc:
            wait = min(delay, deadline - loop.time())
            if wait <= 0:
                raise
            log.warning("%s; retrying in %.1f s", exc, wait)
        await asyncio.sleep(wait)
        delay = min(delay * 2, MAX_BACKOFF_S)


async def open_kafka_bus(settings: Settings) -> Bus:
    """The Kafka bus: topics created if missing; raises KafkaUnavailableError."""
    from ragstream.common.bus.kafka_progress import group_lag

    bus = await KafkaBus.open(settings.bus, settings.indexer.max_document_bytes)

    async def pending(group_id: str, topics: Sequence[str], workspace: str | None = None) -> int:
        return await group_lag(bus.options, group_id, topics, workspace)

    return Bus(publisher=bus.publisher, consumer=bus.consumer, pending=pending, close=bus.close)
