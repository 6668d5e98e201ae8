"""The Kafka event bus (aiokafka), the distributed deployment's Publisher and Consumers.

Topics are named from `bus.topic_prefix` (topics.py) and created with `bus.partitions`
when missing; the document and dead-letter topics accept events up to the indexer's size
limit (plus room for headers), so an oversized event reaches the indexer and is
dead-lettered with the reason instead of being refused silently at the producer.

Keys are UTF-8 bytes (`workspace/doc_id` for documents), so Kafka's default partitioner
keeps each document's events in one partition, in order. The producer is idempotent with
acks=all: a retried send never duplicates or reorders a partition's records, and `publish`
returns once every record is acknowledged by the in-sync replicas.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaProducer

from ragstream.common.bus.kafka_admin import TopicSpec, ensure_topics
from ragstream.common.bus.kafka_consumer import KafkaConsumer
from ragstream.common.bus.protocols import Bus, OutgoingRecord
from ragstream.common.bus.topics import Topics
from ragstream.common.config import BusConfig, Settings

HEADROOM_BYTES = 1 << 20
"""Room above the largest accepted document for the event's other fields and headers."""
MIN_REQUEST_BYTES = 1 << 20


def topic_specs(topics: Topics, partitions: int, max_event_bytes: int) -> list[TopicSpec]:
    """The bus topics, with room for the largest event on the ones that carry documents."""
    sized = {"max.message.bytes": str(max_event_bytes)}
    return [
        TopicSpec(topics.documents, partitions, sized),
        TopicSpec(topics.graph_merge, partitions),
        TopicSpec(topics.documents_dlt, partitions, sized),
    ]


class KafkaPublisher:
    """An idempotent producer, started on the first publish."""

    def __init__(
        self, bootstrap: str, *, max_request_bytes: int, client_id: str = "ragstream"
    ) -> None:
        self._options: dict[str, Any] = {
            "bootstrap_servers": bootstrap,
            "client_id": client_id,
            "enable_idempotence": True,
            "acks": "all",
            "max_request_size": max(MIN_REQUEST_BYTES, max_request_bytes),
        }
        self._producer: Any = None
        self._starting = asyncio.Lock()

    async def _start(self) -> Any:
        async with self._starting:
            if self._producer is None:
                producer = AIOKafkaProducer(**self._options)
                await producer.start()
                self._producer = producer
        return self._producer

    async def publish(self, topic: str, records: Sequence[OutgoingRecord]) -> None:
        """Sends in order and returns once all are acknowledged; raises if any failed
        (some may then be stored: at-least-once, like every retry)."""
        if not topic:
            raise ValueError("topic must not be empty")
        if not records:
            return
        producer = await self._start()
        acks = [
            await producer.send(
                topic,
                record.value,
                key=record.key.encode("utf-8", "surrogateescape"),
                headers=list(record.headers),
            )
            for record in records
        ]
        await asyncio.gather(*acks)

    async def close(self) -> None:
        """Flushes what is buffered and disconnects."""
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()


class KafkaBus:
    """The publisher and the consumer factory of one process; `close` ends them all."""

    def __init__(self, cfg: BusConfig, max_document_bytes: int) -> None:
        self._cfg = cfg
        self.max_event_bytes = max_document_bytes + HEADROOM_BYTES
        self.publisher = KafkaPublisher(cfg.kafka_bootstrap, max_request_bytes=self.max_event_bytes)
        self._consumers: list[KafkaConsumer] = []

    @classmethod
    async def open(cls, cfg: BusConfig, max_document_bytes: int) -> KafkaBus:
        """Creates the missing topics; raises KafkaUnavailableError naming the problem."""
        bus = cls(cfg, max_document_bytes)
        specs = topic_specs(Topics(cfg.topic_prefix), cfg.partitions, bus.max_event_bytes)
        await ensure_topics(cfg.kafka_bootstrap, specs)
        return bus

    def consumer(self, group_id: str, topics: Sequence[str]) -> KafkaConsumer:
        """A new member of `group_id`; it joins the group on its first poll."""
        consumer = KafkaConsumer(self._cfg.kafka_bootstrap, group_id, topics)
        self._consumers.append(consumer)
        return consumer

    async def close(self) -> None:
        for consumer in self._consumers:
            await consumer.close()
        await self.publisher.close()


async def open_kafka_bus(settings: Settings) -> Bus:
    """The Kafka bus: topics created if missing; raises KafkaUnavailableError."""
    from ragstream.common.bus.kafka_progress import group_lag

    bus = await KafkaBus.open(settings.bus, settings.indexer.max_document_bytes)

    async def pending(group_id: str, topics: Sequence[str]) -> int:
        return await group_lag(settings.bus.kafka_bootstrap, group_id, topics)

    return Bus(publisher=bus.publisher, consumer=bus.consumer, pending=pending, close=bus.close)
