"""OpenTelemetry: one tracer and meter provider per process, configured from OTEL_* variables.

`telemetry_session` sets both up when a long-lived process starts (`serve`, `indexer`) and
flushes them when it ends. Exporters are chosen by the standard variables:
OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER (`none`, the default, `otlp` or `console`),
OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
OTEL_BSP_*, OTEL_METRIC_EXPORT_INTERVAL; OTEL_SDK_DISABLED=true turns everything off. With
no exporter nothing is installed, and every span below is the API's no-op span.

The providers are process-wide because OpenTelemetry's API is: instrumented code asks the
global API for its tracer, so a stage never needs a telemetry object passed down to it. The
process's event bus is part of the resource the providers carry (`ragstream.bus.backend`),
which is where messaging spans read it from: no state of ragstream's own beside them.

Attributes never carry document text, prompts, answers or secrets: spans name what happened
(stage, counts, workspace, mode, model, token usage), and a failed span records only the
exception's type, since provider error messages may quote a request or a masked key.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.metadata
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
)
from opentelemetry.trace import Link, Span, SpanContext, SpanKind
from opentelemetry.util.types import AttributeValue

from ragstream.common.bus.protocols import BusRecord
from ragstream.common.config import ConfigError

log = logging.getLogger(__name__)
INSTRUMENTATION = "ragstream"
OWN_PREFIX = "ragstream."
EXPORTERS = frozenset({"none", "otlp", "console"})
Headers = tuple[tuple[str, bytes], ...]
BUS_BACKEND = "ragstream.bus.backend"
"""Resource attribute: the process's event bus (`bus.backend`), for messaging.system."""


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    traces: frozenset[str]
    """Span exporters to install (empty: tracing off)."""
    metrics: frozenset[str]
    """Metric exporters to install (empty: metrics off)."""


def _exporters(env: Mapping[str, str], name: str) -> frozenset[str]:
    raw = env.get(name, "none").strip().lower() or "none"
    chosen = frozenset(part.strip() for part in raw.split(",") if part.strip())
    unknown = chosen - EXPORTERS
    if unknown:
        raise ConfigError(
            f"{name}={raw!r}: unsupported exporter {sorted(unknown)}; use none, otlp or console"
        )
    return chosen - {"none"}


def read_config(env: Mapping[str, str]) -> TelemetryConfig:
    """The exporters the environment asks for; a value this build cannot honour is an error."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return TelemetryConfig(frozenset(), frozenset())
    config = TelemetryConfig(
        _exporters(env, "OTEL_TRACES_EXPORTER"), _exporters(env, "OTEL_METRICS_EXPORTER")
    )
    if "otlp" in config.traces | config.metrics:
        for name in (
            "OTEL_EXPORTER_OTLP_PROTOCOL",
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        ):
            protocol = env.get(name, "grpc").strip().lower()
            if protocol != "grpc":
                raise ConfigError(f"{name}={protocol!r}: only grpc is supported by this build")
    return config


def _resource(default_service: str, messaging_system: str) -> Resource:
    """OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, else the process's own name; and the
    process's event bus."""
    resource = Resource.create({SERVICE_VERSION: _version(), BUS_BACKEND: messaging_system})
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: default_service}))
    return resource


def _version() -> str:
    try:
        return importlib.metadata.version("ragstream")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _span_exporter(name: str) -> SpanExporter:
    if name == "console":
        return ConsoleSpanExporter()
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _metric_exporter(name: str) -> MetricExporter:
    if name == "console":
        return ConsoleMetricExporter()
    from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


class Telemetry:
    """The installed providers; `shutdown` exports what is still buffered."""

    def __init__(self, tracing: TracerProvider | None, metering: MeterProvider | None) -> None:
        self.tracing = tracing
        self.metering = metering

    def shutdown(self) -> None:
        if self.tracing is not None:
            self.tracing.shutdown()
        if self.metering is not None:
            self.metering.shutdown()


def setup_telemetry(
    default_service: str, env: Mapping[str, str] | None = None, messaging_system: str = "sqlite"
) -> Telemetry:
    """Installs the configured providers process-wide; call once, at process start.
    `messaging_system` names the process's event bus in messaging spans (`bus.backend`)."""
    config = read_config(os.environ if env is None else env)
    if not config.traces and not config.metrics:
        return Telemetry(None, None)
    resource = _resource(default_service, messaging_system)
    tracing = None
    if config.traces:
        tracing = TracerProvider(resource=resource)
        for name in sorted(config.traces):
            tracing.add_span_processor(BatchSpanProcessor(_span_exporter(name)))
        trace.set_tracer_provider(tracing)
    metering = None
    if config.metrics:
        readers: list[MetricReader] = [
            PeriodicExportingMetricReader(_metric_exporter(name)) for name in sorted(config.metrics)
        ]
        metering = MeterProvider(metric_readers=readers, resource=resource)
        metrics.set_meter_provider(metering)
    log.info(
        "telemetry: traces %s, metrics %s",
        ",".join(sorted(config.traces)) or "off",
        ",".join(sorted(config.metrics)) or "off",
    )
    return Telemetry(tracing, metering)


@contextlib.asynccontextmanager
async def telemetry_session(
    default_service: str, messaging_system: str = "sqlite"
) -> AsyncIterator[Telemetry]:
    """Telemetry for the lifetime of a process's main coroutine; flushed on the way out.
    `messaging_system` names the process's event bus in messaging spans (`bus.backend`)."""
    telemetry = setup_telemetry(default_service, messaging_system=messaging_system)
    try:
        yield telemetry
    finally:
        # Flushing waits on the exporters' network calls: keep them off the event loop.
        await asyncio.to_thread(telemetry.shutdown)


def messaging_system(provider: trace.TracerProvider | None = None) -> str:
    """The bus backend, for messaging.system: read from the resource of the tracer provider
    (the installed one by default), which describes the process. Without one, spans record
    nothing and the default is never seen."""
    provider = provider or trace.get_tracer_provider()
    if isinstance(provider, TracerProvider):
        return str(provider.resource.attributes.get(BUS_BACKEND, "sqlite"))
    return "sqlite"


@functools.cache
def tracer() -> trace.Tracer:
    """ragstream's tracer, looked up once: a tracer taken before the provider is installed
    is a proxy that follows it, so caching is safe and spares a lookup per span."""
    return trace.get_tracer(INSTRUMENTATION)


def own(**values: AttributeValue) -> dict[str, AttributeValue]:
    """ragstream's own attributes, namespaced: own(chunks=3) -> {"ragstream.chunks": 3}."""
    return {OWN_PREFIX + name: value for name, value in values.items()}


def annotate(span: Span, **values: AttributeValue) -> None:
    """Sets ragstream's own attributes on a span (a no-op span ignores them)."""
    span.set_attributes(own(**values))


def mark_failed(span: Span, error: BaseException) -> None:
    """ERROR status with the exception's type only (see the module docstring for why)."""
    kind = type(error).__name__
    span.set_attribute("error.type", kind)
    span.set_status(trace.Status(trace.StatusCode.ERROR, kind))


@contextlib.contextmanager
def span(
    name: str,
    *,
    kind: SpanKind = SpanKind.INTERNAL,
    parent: otel_context.Context | None = None,
    links: Sequence[Link] = (),
    attributes: Mapping[str, AttributeValue] | None = None,
    current: bool = True,
) -> Iterator[Span]:
    """A span for the block, the current span inside it unless `current` is False (for an
    async generator that yields while the span is open: its consumer runs in between, and
    must not find the generator's span current). `parent` overrides the current context."""
    opened = tracer().start_span(
        name, context=parent, kind=kind, links=links, attributes=attributes
    )
    token = otel_context.attach(trace.set_span_in_context(opened)) if current else None
    try:
        yield opened
    except GeneratorExit:
        raise  # an abandoned stream: closed by its consumer, not failed
    except BaseException as exc:
        mark_failed(opened, exc)
        raise
    finally:
        if token is not None:
            otel_context.detach(token)
        opened.end()


@contextlib.contextmanager
def linked_root_span(
    name: str,
    linked: Sequence[SpanContext],
    kind: SpanKind,
    attributes: Mapping[str, AttributeValue],
) -> Iterator[Span]:
    """A span that starts its own trace and links to each valid span in `linked` (once):
    work done on behalf of several traces at once, such as one batch serving many callers."""
    unique = {(ctx.trace_id, ctx.span_id): ctx for ctx in linked if ctx.is_valid}
    links = [Link(ctx) for ctx in unique.values()]
    with span(
        name, kind=kind, parent=otel_context.Context(), links=links, attributes=attributes
    ) as current:
        yield current


def trace_headers() -> Headers:
    """The current trace context as W3C headers for a bus record (traceparent, tracestate,
    and the caller's baggage if any); empty when no span is current, so untraced producers
    add nothing."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return tuple((name, value.encode()) for name, value in carrier.items())


def context_of(headers: Headers) -> otel_context.Context:
    """The trace context a record was produced in (an empty context when it carries none)."""
    carrier = {name: value.decode("utf-8", "replace") for name, value in headers}
    return propagate.extract(carrier, context=otel_context.Context())


def links_of(
    records: Sequence[BusRecord],
    parse: Callable[[Headers], otel_context.Context] = context_of,
) -> list[Link]:
    """Links to the producers of records that were read but not processed on their own."""
    found = [trace.get_current_span(parse(r.headers)).get_span_context() for r in records]
    return [Link(ctx) for ctx in found if ctx.is_valid]
