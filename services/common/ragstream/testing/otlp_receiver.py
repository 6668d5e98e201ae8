"""An OTLP/gRPC receiver for tests: what an OpenTelemetry collector would receive, in memory.

It implements the collector's TraceService/Export and MetricsService/Export with the message
classes of the opentelemetry-proto package, so the real OTLP exporters of a `ragstream`
process send to it unchanged (OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint). It keeps the
decoded spans and metric points, and the raw request bytes, for checks on what was exported.

    with OTLPReceiver() as receiver:
        ...  # run a process with OTEL_TRACES_EXPORTER=otlp and the endpoint above
        spans = receiver.wait_for(lambda r: any(s.name == "keywords" for s in r.spans()))

Run standalone to watch a process's spans: python -m ragstream.testing.otlp_receiver --port 4317
"""

from __future__ import annotations

import argparse
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2 as metrics_pb
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace_pb
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.metrics.v1 import metrics_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

TRACE_SERVICE = "opentelemetry.proto.collector.trace.v1.TraceService"
METRICS_SERVICE = "opentelemetry.proto.collector.metrics.v1.MetricsService"
Attributes = dict[str, object]


def value_of(value: common_pb2.AnyValue) -> object:
    """An OTLP AnyValue as the Python value it was set from."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return attributes_of(value.kvlist_value.values)
    return getattr(value, kind) if kind else None


def attributes_of(pairs: Sequence[common_pb2.KeyValue]) -> Attributes:
    return {pair.key: value_of(pair.value) for pair in pairs}


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    service: str
    """The exporting process's service.name."""
    trace_id: str
    """Hex, as in a W3C traceparent."""
    span_id: str
    parent_span_id: str
    """Empty for a root span."""
    kind: int
    """trace_pb2.Span.SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer."""
    attributes: Attributes
    links: tuple[tuple[str, str], ...]
    """(trace_id, span_id) of each linked span."""
    status_code: int
    """trace_pb2.Status.StatusCode: 0 unset, 1 ok, 2 error."""
    event_names: tuple[str, ...]

    def number(self, key: str) -> float:
        """A numeric attribute; KeyError or TypeError when it is missing or not a number."""
        value = self.attributes[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{self.name}: attribute {key}={value!r} is not a number")
        return float(value)


@dataclass(frozen=True)
class ReceivedPoint:
    metric: str
    attributes: Attributes
    value: float
    """A gauge's or sum's value; a histogram's sum."""
    count: int
    """A histogram's count; 1 for gauges and sums."""


def spans_of(request: trace_pb.ExportTraceServiceRequest) -> list[ReceivedSpan]:
    found = []
    for resource_spans in request.resource_spans:
        service = str(attributes_of(resource_spans.resource.attributes).get("service.name", ""))
        for scope in resource_spans.scope_spans:
            found += [_span(service, span) for span in scope.spans]
    return found


def _span(service: str, span: trace_pb2.Span) -> ReceivedSpan:
    return ReceivedSpan(
        name=span.name,
        service=service,
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        parent_span_id=span.parent_span_id.hex(),
        kind=span.kind,
        attributes=attributes_of(span.attributes),
        links=tuple((link.trace_id.hex(), link.span_id.hex()) for link in span.links),
        status_code=span.status.code,
        event_names=tuple(event.name for event in span.events),
    )


def points_of(request: metrics_pb.ExportMetricsServiceRequest) -> list[ReceivedPoint]:
    found = []
    for resource_metrics in request.resource_metrics:
        for scope in resource_metrics.scope_metrics:
            for metric in scope.metrics:
                found += _points(metric)
    return found


def _points(metric: metrics_pb2.Metric) -> list[ReceivedPoint]:
    kind = metric.WhichOneof("data")
    if kind == "histogram":
        return [
            ReceivedPoint(metric.name, attributes_of(p.attributes), p.sum, p.count)
            for p in metric.histogram.data_points
        ]
    if kind in ("gauge", "sum"):
        numbers = metric.gauge.data_points if kind == "gauge" else metric.sum.data_points
        return [
            ReceivedPoint(metric.name, attributes_of(p.attributes), _number(p), 1) for p in numbers
        ]
    return []


def _number(point: metrics_pb2.NumberDataPoint) -> float:
    return point.as_double if point.WhichOneof("value") == "as_double" else float(point.as_int)


class OTLPReceiver:
    """Binds 127.0.0.1 on a free port (or the given one); `endpoint` is the exporters' URL."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._lock = threading.Lock()
        self._spans: list[ReceivedSpan] = []
        self._points: list[ReceivedPoint] = []
        self._raw: list[bytes] = []
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._server.add_generic_rpc_handlers(self._handlers())
        self.host = host
        self.port = self._server.add_insecure_port(f"{host}:{port}")

    @property
    def endpoint(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _handlers(self) -> tuple[grpc.GenericRpcHandler[Any, Any], ...]:
        traces = grpc.method_handlers_generic_handler(
            TRACE_SERVICE,
            {
                "Export": grpc.unary_unary_rpc_method_handler(
                    self._export_traces,
                    request_deserializer=lambda data: data,
                    response_serializer=trace_pb.ExportTraceServiceResponse.SerializeToString,
                )
            },
        )
        metric_handlers = {
            "Export": grpc.unary_unary_rpc_method_handler(
                self._export_metrics,
                request_deserializer=lambda data: data,
                response_serializer=metrics_pb.ExportMetricsServiceResponse.SerializeToString,
            )
        }
        metrics = grpc.method_handlers_generic_handler(METRICS_SERVICE, metric_handlers)
        return traces, metrics

    def _export_traces(self, data: bytes, context: object) -> trace_pb.ExportTraceServiceResponse:
        spans = spans_of(trace_pb.ExportTraceServiceRequest.FromString(data))
        with self._lock:
            self._raw.append(data)
            self._spans += spans
        return trace_pb.ExportTraceServiceResponse()

    def _export_metrics(
        self, data: bytes, context: object
    ) -> metrics_pb.ExportMetricsServiceResponse:
        points = points_of(metrics_pb.ExportMetricsServiceRequest.FromString(data))
        with self._lock:
            self._raw.append(data)
            self._points += points
        return metrics_pb.ExportMetricsServiceResponse()

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)

    def points(self) -> list[ReceivedPoint]:
        with self._lock:
            return list(self._points)

    def raw(self) -> list[bytes]:
        """Every export request as it arrived, for scanning what left the process."""
        with self._lock:
            return list(self._raw)

    def wait_for(
        self, ready: Callable[[OTLPReceiver], bool], timeout_s: float = 30.0
    ) -> list[ReceivedSpan]:
        """The spans once `ready(self)` holds; TimeoutError (naming what arrived) if it never
        does. Exporters send in batches, so what a test waits for arrives some time later."""
        deadline = time.monotonic() + timeout_s
        while not ready(self):
            if time.monotonic() > deadline:
                names = sorted({span.name for span in self.spans()})
                raise TimeoutError(f"not received within {timeout_s} s; span names: {names}")
            time.sleep(0.1)
        return self.spans()

    def start(self) -> OTLPReceiver:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=1.0).wait()

    def __enter__(self) -> OTLPReceiver:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Print the spans an OTLP exporter sends.")
    parser.add_argument("--port", type=int, default=4317)
    args = parser.parse_args(argv)
    with OTLPReceiver(port=args.port) as receiver:
        print(f"OTLP/gRPC receiver on {receiver.endpoint}", flush=True)
        shown = 0
        try:
            while True:
                time.sleep(0.5)
                spans = receiver.spans()
                for span in spans[shown:]:
                    parent = span.parent_span_id or "root"
                    print(f"{span.trace_id} {span.span_id} <- {parent}  {span.name}", flush=True)
                shown = len(spans)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
