"""Telemetry configuration, trace-context propagation through bus headers and gRPC metadata,
and the consumer-lag gauge. (Spans themselves are checked end to end in e2e/test_tracing.py,
against a real exporter and receiver.)"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.metrics import CallbackOptions
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from ragstream.common.bus.protocols import BusRecord
from ragstream.common.bus.spans import record_attributes
from ragstream.common.config import ConfigError
from ragstream.common.events import DocumentChange, MergeKey, decode, encode, encode_merge
from ragstream.common.instruments import ConsumerLag
from ragstream.common.telemetry import (
    BUS_BACKEND,
    context_of,
    links_of,
    messaging_system,
    own,
    read_config,
    trace_headers,
)
from ragstream.common.timing import StageTimer
from ragstream.query.transport.tracing import parent_context

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


@contextmanager
def inside_span(trace_id: int = TRACE_ID, span_id: int = SPAN_ID) -> Iterator[None]:
    parent = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(1))
    token = otel_context.attach(trace.set_span_in_context(NonRecordingSpan(parent)))
    try:
        yield
    finally:
        otel_context.detach(token)


def span_context(ctx: otel_context.Context) -> SpanContext:
    return trace.get_current_span(ctx).get_span_context()


def test_exporters_default_to_none() -> None:
    config = read_config({})
    assert not config.traces and not config.metrics


def test_exporter_lists_are_read_and_none_means_off() -> None:
    config = read_config({"OTEL_TRACES_EXPORTER": "otlp, console", "OTEL_METRICS_EXPORTER": "none"})
    assert config.traces == {"otlp", "console"} and not config.metrics


def test_sdk_disabled_wins_over_exporters() -> None:
    config = read_config({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"})
    assert not config.traces


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OTEL_TRACES_EXPORTER": "jaeger"}, "OTEL_TRACES_EXPORTER"),
        ({"OTEL_METRICS_EXPORTER": "prometheus"}, "OTEL_METRICS_EXPORTER"),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ),
    ],
)
def test_settings_this_build_cannot_honour_are_errors(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        read_config(env)


def test_the_protocol_only_matters_when_exporting_over_otlp() -> None:
    env = {"OTEL_TRACES_EXPORTER": "console", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
    assert read_config(env).traces == {"console"}


def test_no_headers_outside_a_span() -> None:
    assert trace_headers() == ()
    assert "traceparent" not in dict(encode(DocumentChange("ws", "d", 1, True)).headers)


def test_encoded_events_carry_the_current_context_to_the_consumer() -> None:
    with inside_span():
        record = encode(DocumentChange("ws", "d", 1, False, "text"))
        merge = encode_merge(MergeKey("ws", "kestrel"))
    headers = dict(record.headers)
    assert headers["traceparent"] == TRACEPARENT.encode()
    assert dict(merge.headers)["traceparent"] == TRACEPARENT.encode()
    received = BusRecord("t", 0, 0, record.key, record.value, record.headers)
    assert decode(received, 10_000).content == "text"
    found = span_context(context_of(received.headers))
    assert (found.trace_id, found.span_id, found.is_remote) == (TRACE_ID, SPAN_ID, True)


def test_a_record_without_context_starts_a_new_trace() -> None:
    assert not span_context(context_of((("content-type", b"x"),))).is_valid
    assert not span_context(context_of((("traceparent", b"garbage"),))).is_valid


def test_links_point_at_each_producer_with_a_context() -> None:
    traced = BusRecord("t", 0, 1, "k", b"", (("traceparent", TRACEPARENT.encode()),))
    untraced = BusRecord("t", 0, 2, "k", b"")
    links = links_of([traced, untraced])
    assert [(link.context.trace_id, link.context.span_id) for link in links] == [
        (TRACE_ID, SPAN_ID)
    ]


def test_grpc_metadata_gives_the_callers_context() -> None:
    metadata = (("traceparent", TRACEPARENT), ("token-bin", b"\x00\x01"))
    found = span_context(parent_context(metadata))
    assert (found.trace_id, found.span_id) == (TRACE_ID, SPAN_ID)
    assert not span_context(parent_context(None)).is_valid


def test_record_attributes_name_the_record_never_its_value() -> None:
    record = BusRecord("docs", 3, 42, "ws/doc", b"secret text", (("ce_id", b"e1"),))
    kafka = record_attributes(record, "kafka")
    assert kafka["messaging.kafka.offset"] == 42
    assert kafka["messaging.kafka.message.key"] == "ws/doc"
    assert kafka["messaging.destination.partition.id"] == "3"
    assert kafka["messaging.message.id"] == "e1"
    embedded = record_attributes(record, "sqlite")
    assert embedded["ragstream.bus.offset"] == 42
    assert "messaging.kafka.offset" not in embedded
    assert not any("secret" in str(value) for value in (*kafka.values(), *embedded.values()))


def test_own_attributes_are_namespaced() -> None:
    assert own(chunks=3, mode="mix") == {"ragstream.chunks": 3, "ragstream.mode": "mix"}


def test_stage_timer_times_stages_with_or_without_a_tracer() -> None:
    timer = StageTimer()
    with timer.stage("embed", texts=3) as span:
        span.set_attribute("ragstream.hits", 1)  # a no-op span takes attributes too
    with pytest.raises(ValueError), timer.stage("search_chunks"):
        raise ValueError("boom")
    assert [name for name, _ in timer.items()] == ["embed", "search_chunks"]
    assert timer.elapsed_s >= sum(ms for _, ms in timer.items()) / 1000


def test_consumer_lag_reports_the_latest_value_per_partition() -> None:
    lag = ConsumerLag()
    lag.update({("docs", 0): 5, ("merges", 0): 2})
    lag.update({("docs", 0): 1})
    lag.forget([("merges", 0)])
    observed = lag.observe(CallbackOptions())
    assert [(o.value, dict(o.attributes or {})) for o in observed] == [
        (1, {"messaging.destination.name": "docs", "messaging.destination.partition.id": "0"})
    ]


def test_messaging_spans_name_the_bus_of_the_process_resource() -> None:
    kafka = TracerProvider(resource=Resource({BUS_BACKEND: "kafka"}))
    assert messaging_system(kafka) == "kafka"
    assert messaging_system(TracerProvider(resource=Resource({}))) == "sqlite"
