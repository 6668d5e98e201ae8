"""`ragstream indexer` and `serve` processes on the real Kafka broker, and what tests read.

Each test gets a deployment of its own (`KafkaDeployment`): a topic prefix and a consumer
group no other test uses, and a data directory for the embedded stores, which the indexer
processes of the deployment share (the SQLite database is WAL and takes writes from
several processes).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka.admin import AIOKafkaAdminClient

from ragstream.common.bus.kafka import KafkaBus
from ragstream.common.bus.kafka_consumer import bus_record
from ragstream.common.bus.protocols import BusRecord, OutgoingRecord
from ragstream.common.bus.topics import Topics
from ragstream.common.config import BusConfig
from ragstream.common.config_kafka import KafkaSecurityConfig
from ragstream.common.events import DocumentChange, encode
from ragstream.common.models import Collection, DocState, DocumentRecord
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.documents import SqliteDocumentStore
from ragstream.common.storage.sqlite.search import SqliteSearchStore
from tests.support.kafka_secured import KafkaListener
from tests.support.server import RagstreamProcess

WORKSPACE = "kafka"
MAX_DOCUMENT_BYTES = 200_000


@dataclass
class KafkaDeployment:
    """The settings that the indexer processes and the test share."""

    bootstrap: str
    data_dir: Path
    partitions: int = 4
    prefix: str = field(default_factory=lambda: f"it{uuid.uuid4().hex[:12]}")
    extra_env: dict[str, str] = field(default_factory=dict)
    security: KafkaSecurityConfig = field(default_factory=KafkaSecurityConfig)
    """How the processes and the test reach the broker (bus.kafka_security)."""

    @classmethod
    def on(cls, listener: KafkaListener, data_dir: Path, **fields: Any) -> KafkaDeployment:
        """A deployment whose clients use one listener of the test broker."""
        return cls(listener.bootstrap, data_dir, security=listener.security, **fields)

    @property
    def listener(self) -> KafkaListener:
        return KafkaListener(self.bootstrap, self.security)

    @property
    def topics(self) -> Topics:
        return Topics(self.prefix)

    @property
    def group_id(self) -> str:
        return f"{self.prefix}-indexer"

    @property
    def bus(self) -> BusConfig:
        return self.listener.bus(
            topic_prefix=self.prefix, partitions=self.partitions, group_id=self.group_id
        )

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "RAGSTREAM_BUS__BACKEND": "kafka",
            **self.listener.env(),
            "RAGSTREAM_BUS__TOPIC_PREFIX": self.prefix,
            "RAGSTREAM_BUS__PARTITIONS": str(self.partitions),
            "RAGSTREAM_BUS__GROUP_ID": self.group_id,
            "RAGSTREAM_EMBEDDING__PROVIDER": "hash",
            "RAGSTREAM_DATA_DIR": str(self.data_dir),
            "RAGSTREAM_INDEXER__MAX_DOCUMENT_BYTES": str(MAX_DOCUMENT_BYTES),
            **self.extra_env,
        }

    def indexer(self, name: str) -> RagstreamProcess:
        """`ragstream indexer`, serving grpc.health.v1 on `address`."""
        return RagstreamProcess(self.env(), self._log(name), "indexer", "--health-listen")

    def server(self, name: str) -> RagstreamProcess:
        """`ragstream serve --no-indexer`: the query and ingest services on `address`."""
        return RagstreamProcess(self.env(), self._log(name), "serve", "--no-indexer", "--listen")

    def _log(self, name: str) -> Path:
        return self.data_dir.parent / f"{self.prefix}-{name}.log"

    async def publish(self, records: Sequence[OutgoingRecord]) -> None:
        bus = await KafkaBus.open(self.bus, MAX_DOCUMENT_BYTES)
        try:
            await bus.publisher.publish(self.topics.documents, records)
        finally:
            await bus.close()


def document(i: int, paragraphs: int = 12, version: int = 1) -> DocumentChange:
    text = "\n\n".join(
        f"Report {i} paragraph {p} of version {version}. Station {i % 13} measured salinity "
        f"{(p * i) % 97} units near harbour {i % 7}. Engineer {i % 11} filed note {p}."
        for p in range(paragraphs)
    )
    return DocumentChange(
        WORKSPACE,
        f"doc-{i:04d}",
        version,
        deleted=False,
        content=text,
        file_path=f"reports/{i:04d}.txt",
        metadata={"station": str(i % 13)},
        timestamp=1_700_000_000.0 + i,
        event_id=f"event-{i}-{version}",
    )


def events(changes: Sequence[DocumentChange]) -> list[OutgoingRecord]:
    return [encode(change) for change in changes]


async def _documents(data_dir: Path) -> list[DocumentRecord]:
    async with await Database.open(data_dir) as db:
        docs = await SqliteDocumentStore.open(db)
        return await docs.list(WORKSPACE, None, 100_000)


def documents(data_dir: Path) -> list[DocumentRecord]:
    """Every document record of the test workspace (empty before the first write)."""
    if not (data_dir / "ragstream.db").exists():
        return []
    return asyncio.run(_documents(data_dir))


def processed(data_dir: Path) -> int:
    return sum(record.state == DocState.PROCESSED for record in documents(data_dir))


def wait_until(predicate: Any, timeout_s: float, what: str, poll_s: float = 0.2) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout_s} s")
        time.sleep(poll_s)


async def _dump(data_dir: Path) -> dict[str, Any]:
    async with await Database.open(data_dir) as db:
        docs = await (await SqliteDocumentStore.open(db)).list(WORKSPACE, None, 100_000)
        search = await SqliteSearchStore.open(db)
        ids = sorted({chunk for record in docs for chunk in record.chunk_ids})
        chunks = await search.get(Collection.CHUNKS, WORKSPACE, ids)
        stored = await search.count(Collection.CHUNKS, WORKSPACE)
    return {
        "documents": {
            r.doc_id: (
                r.version,
                str(r.state),
                r.content_hash,
                r.file_path,
                dict(r.metadata),
                r.timestamp,
                r.error,
                r.chunk_ids,
            )
            for r in docs
        },
        "chunks": {
            c.id: (
                c.text,
                c.terms,
                c.vector.tobytes(),
                c.doc_ids,
                dict(c.metadata),
                c.timestamp,
                dict(c.attrs),
            )
            for c in chunks
        },
        "chunks_stored": stored,
    }


def dump(data_dir: Path) -> dict[str, Any]:
    """The stores' content without run-dependent fields (times, durations)."""
    return asyncio.run(_dump(data_dir))


async def _group_offsets(listener: KafkaListener, group: str, topic: str) -> dict[int, int]:
    admin = AIOKafkaAdminClient(**listener.client())
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {
        tp.partition: meta.offset
        for tp, meta in offsets.items()
        if tp.topic == topic and meta.offset >= 0
    }


def group_offsets(deployment: KafkaDeployment) -> dict[int, int]:
    """Per partition of the document topic, the group's committed offset."""
    return asyncio.run(
        _group_offsets(deployment.listener, deployment.group_id, deployment.topics.documents)
    )


async def _read_topic(listener: KafkaListener, topic: str) -> list[BusRecord]:
    consumer = AIOKafkaConsumer(
        topic, **listener.client(enable_auto_commit=False, auto_offset_reset="earliest")
    )
    await consumer.start()  # without a group: every partition is assigned
    try:
        partitions = sorted(consumer.assignment())
        ends = await consumer.end_offsets(partitions)
        records: list[BusRecord] = []
        async with asyncio.timeout(30):
            while [tp for tp in partitions if await consumer.position(tp) < ends[tp]]:
                batches = await consumer.getmany(timeout_ms=500)
                records += [bus_record(r) for batch in batches.values() for r in batch]
        return records
    finally:
        await consumer.stop()


def read_topic(deployment: KafkaDeployment, topic: str) -> list[BusRecord]:
    """Every record of the topic, outside any consumer group."""
    return asyncio.run(_read_topic(deployment.listener, topic))
