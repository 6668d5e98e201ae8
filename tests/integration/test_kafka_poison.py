"""Poison events on the real broker: each lands in the dead-letter topic with headers naming
its source and the error, its partition moves on, and every good event around it (protobuf
and JSON alike) is indexed. Runs over PLAINTEXT and SASL_SSL."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from google.protobuf import json_format

from ragstream.common.bus.protocols import OutgoingRecord
from ragstream.common.events import DocumentChange, encode
from ragstream.common.models import DocState
from ragstream.v1 import events_pb2
from tests.support.kafka_indexer import (
    MAX_DOCUMENT_BYTES,
    WORKSPACE,
    KafkaDeployment,
    document,
    documents,
    read_topic,
    wait_until,
)
from tests.support.kafka_secured import KafkaListener

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
TRACEPARENT = b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
JSON = (("content-type", b"application/json"), ("traceparent", TRACEPARENT))
PROTOBUF = (("content-type", b"application/protobuf"), ("traceparent", TRACEPARENT))


def poison(n: int) -> tuple[bytes, tuple[tuple[str, bytes], ...], str]:
    """The n-th poison event: value, headers and a fragment of the error it must cause."""
    oversized = document(n, paragraphs=1).content + "x" * (MAX_DOCUMENT_BYTES + 1)
    cases = [
        (b"\x00\xff\xfe garbage \x07", PROTOBUF, "undecodable protobuf"),
        (b'{"workspace": "kafka", "docId": ', JSON, "invalid JSON"),
        (
            json.dumps(
                {"workspace": WORKSPACE, "version": "2", "upsert": {"content": "t"}}
            ).encode(),
            JSON,
            "doc_id",
        ),
        (b'{"workspace": "kafka", "docId": "d\xff\xfe", "version": "2"}', JSON, "utf-8"),
        (
            encode(
                DocumentChange(WORKSPACE, f"doc-{n:04d}", 2, False, oversized, event_id="big")
            ).value
            or b"",
            PROTOBUF,
            "exceeds the limit",
        ),
    ]
    return cases[n]


def as_json(change: DocumentChange) -> OutgoingRecord:
    """The change as an upstream producer may send it: JSON, with CloudEvents headers."""
    record = encode(change)
    event = events_pb2.DocumentEvent.FromString(record.value or b"")
    headers = tuple((k, v) for k, v in record.headers if k != "content-type") + JSON
    return OutgoingRecord(record.key, json_format.MessageToJson(event).encode(), headers)


def test_poison_events_are_dead_lettered_and_the_partitions_move_on(
    kafka_listener: KafkaListener, tmp_path: Path
) -> None:
    deployment = KafkaDeployment.on(kafka_listener, tmp_path / "data", partitions=2)
    records: list[OutgoingRecord] = []
    for n in range(5):  # per poison: v1 of a document, the poison on its key, then v2
        records += [encode(document(n)), OutgoingRecord(f"{WORKSPACE}/doc-{n:04d}", *poison(n)[:2])]
        records.append(as_json(document(n, version=2)) if n % 2 else encode(document(n, version=2)))
    records += [as_json(document(n)) for n in range(5, 15)]
    asyncio.run(deployment.publish(records))

    indexer = deployment.indexer("only").start()
    try:
        wait_until(
            lambda: (
                sum(d.state == DocState.PROCESSED for d in documents(deployment.data_dir)) == 15
            ),
            60,
            "every good event indexed",
        )
        dead = read_topic(deployment, deployment.topics.documents_dlt)
    finally:
        indexer.stop()
    versions = {d.doc_id: d.version for d in documents(deployment.data_dir)}
    assert versions == {f"doc-{n:04d}": 2 if n < 5 else 1 for n in range(15)}

    documents_topic = read_topic(deployment, deployment.topics.documents)
    sources = {(r.partition, r.offset): r for r in documents_topic}
    assert len(dead) == 5
    for letter in dead:
        value, _, fragment = poison(int(letter.key.rsplit("-", 1)[1]))
        partition = int(letter.header("dlt.source.partition") or b"-1")
        source = sources[(partition, int(letter.header("dlt.source.offset") or b"-1"))]
        assert letter.value == value
        assert (source.key, source.value) == (letter.key, letter.value)
        assert letter.header("dlt.source.topic") == deployment.topics.documents.encode()
        assert letter.header("dlt.error.class") == b"PoisonEvent"
        assert fragment in (letter.header("dlt.error.message") or b"").decode()
        assert letter.header("traceparent") == TRACEPARENT
