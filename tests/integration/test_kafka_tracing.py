"""On a real broker: the indexing trace of a document continues its producer's trace."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragstream.common.bus.protocols import OutgoingRecord
from ragstream.common.events import encode
from ragstream.testing.otlp_receiver import OTLPReceiver
from tests.support.kafka_indexer import KafkaDeployment, document

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_indexing_spans_continue_the_producers_trace(
    kafka_broker: KafkaEndpoint, tmp_path: Path
) -> None:
    trace_id, parent = secrets.token_hex(16), secrets.token_hex(8)
    record = encode(document(1))
    headers = (*record.headers, ("traceparent", f"00-{trace_id}-{parent}-01".encode()))
    with OTLPReceiver() as receiver:
        deployment = KafkaDeployment(
            kafka_broker.bootstrap,
            tmp_path / "data",
            partitions=1,
            extra_env={
                "OTEL_TRACES_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                "OTEL_BSP_SCHEDULE_DELAY": "100",
            },
        )
        asyncio.run(deployment.publish([OutgoingRecord(record.key, record.value, headers)]))
        indexer = deployment.indexer("traced").start()
        try:
            spans = receiver.wait_for(
                lambda r: any(
                    s.trace_id == trace_id and s.name == "index_document" for s in r.spans()
                ),
                timeout_s=90,
            )
        finally:
            indexer.stop()
    traced = [s for s in spans if s.trace_id == trace_id]
    consumer = [s for s in traced if s.parent_span_id == parent]
    assert consumer, "no span is a child of the producer's span"
    assert {"index_document"} <= {s.name for s in traced}
