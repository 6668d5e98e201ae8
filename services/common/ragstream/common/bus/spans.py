"""Messaging spans, after OpenTelemetry's messaging conventions (Kafka's in particular).

A producer publishes inside a `send <topic>` span, and the encoders put that span's W3C
context in each record's headers (events.py). The consumer processes each record inside a
`process <topic>` span whose parent is that stored context, so an indexing trace continues
the trace of whoever published the event: a gRPC client, stage 1 for stage 2, or any Kafka
producer that sets `traceparent`. The embedded log stores headers with the record, so the
same holds there.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind
from opentelemetry.util.types import AttributeValue

from ragstream.common.bus.protocols import BusRecord
from ragstream.common.telemetry import context_of, messaging_system, span, tracer


@contextmanager
def producer_span(topic: str, count: int) -> Iterator[Span]:
    attributes: dict[str, AttributeValue] = {
        "messaging.system": messaging_system(),
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
        "messaging.destination.name": topic,
        "messaging.batch.message_count": count,
    }
    with span(f"send {topic}", kind=SpanKind.PRODUCER, attributes=attributes) as current:
        yield current


def record_attributes(record: BusRecord, system: str) -> dict[str, AttributeValue]:
    """Where the record came from; the key is `workspace/doc_id` or `workspace/entity-key`,
    an identifier and never document text."""
    attributes: dict[str, AttributeValue] = {
        "messaging.system": system,
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": record.topic,
        "messaging.destination.partition.id": str(record.partition),
    }
    namespace = "messaging.kafka" if system == "kafka" else "ragstream.bus"
    attributes[f"{namespace}.offset"] = record.offset
    attributes[f"{namespace}.message.key"] = record.key
    event_id = record.header("ce_id")
    if event_id:
        attributes["messaging.message.id"] = event_id.decode("utf-8", "replace")
    return attributes


@contextmanager
def consumer_span(record: BusRecord) -> Iterator[Span]:
    """Processing one record, as the current span and a child of the context its producer
    stored in it."""
    with span(
        f"process {record.topic}",
        kind=SpanKind.CONSUMER,
        parent=context_of(record.headers),
        attributes=record_attributes(record, messaging_system()),
    ) as opened:
        yield opened


def start_consumer_span(record: BusRecord, links: Sequence[Link], parent: Context) -> Span:
    """`consumer_span` for one record of a batch, with the producer context already parsed
    (`parent`) and links to the other records it serves; started but neither made current
    nor ended: the caller ends it. A batch opens one per key, thousands a poll, and a context
    manager each would cost more than the span itself."""
    return tracer().start_span(
        f"process {record.topic}",
        context=parent,
        kind=SpanKind.CONSUMER,
        links=links,
        attributes=record_attributes(record, messaging_system()),
    )
