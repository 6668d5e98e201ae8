"""Server spans for ragstream's gRPC services, continuing the caller's trace.

A grpc.aio interceptor wraps each QueryService and IngestService call in a SERVER span whose
parent is the W3C context in the call's metadata (`traceparent`, `tracestate`), with the RPC
conventions' attributes: rpc.system, rpc.service, rpc.method and rpc.grpc.status_code.
Health checks and reflection are not traced (probes would drown the real traffic). The stage
spans of the servicers are children of this span. A cancelled call (the client went away,
or its deadline passed) ends its span as CANCELLED and is logged at debug level only: it is
the caller's decision, not a fault.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ragstream.common.telemetry import mark_failed, tracer
from ragstream.query.transport.streams import StreamHandler, respond

log = logging.getLogger(__name__)
TRACED_PREFIX = "/ragstream."
# Server side, only these codes mean the server failed (RPC conventions); the others (bad
# argument, not found, ...) are the caller's problem and leave the span's status unset.
SERVER_ERRORS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)
_BY_VALUE = {code.value[0]: code for code in grpc.StatusCode}

Context = grpc.aio.ServicerContext[Any, Any]
if TYPE_CHECKING:
    _Interceptor = grpc.aio.ServerInterceptor[Any, Any]
else:  # not subscriptable at run time
    _Interceptor = grpc.aio.ServerInterceptor
Unary = Callable[[Any, Context], Awaitable[Any]]


def parent_context(metadata: Any) -> otel_context.Context:
    """The caller's trace context from text metadata (binary `-bin` entries are skipped)."""
    carrier = {key: value for key, value in metadata or () if isinstance(value, str)}
    return propagate.extract(carrier, context=otel_context.Context())


def status_of(context: Context) -> grpc.StatusCode | None:
    """The status the handler set or aborted with; None when it set none."""
    code: object = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(code, int):
        return _BY_VALUE.get(code)
    return None


def cancelled_code(context: Context) -> grpc.StatusCode:
    """Why gRPC cancelled a handler: its deadline passed, or the client went away."""
    left = context.time_remaining()
    if left is not None and left <= 0:
        return grpc.StatusCode.DEADLINE_EXCEEDED
    return grpc.StatusCode.CANCELLED


def finish(span: Span, code: grpc.StatusCode, error: BaseException | None = None) -> None:
    span.set_attribute("rpc.grpc.status_code", code.value[0])
    if code in SERVER_ERRORS:
        if error is not None:
            mark_failed(span, error)
        else:
            span.set_status(Status(StatusCode.ERROR, code.name))


@dataclass(frozen=True, slots=True)
class RpcSpan:
    """The span of one call to `/service/method`."""

    service: str
    method: str
    parent: otel_context.Context

    @contextmanager
    def open(self, context: Context) -> Iterator[Span]:
        with tracer().start_as_current_span(
            f"{self.service}/{self.method}",
            context=self.parent,
            kind=SpanKind.SERVER,
            attributes={
                "rpc.system": "grpc",
                "rpc.service": self.service,
                "rpc.method": self.method,
            },
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except asyncio.CancelledError:
                code = cancelled_code(context)
                log.debug("%s/%s ended: %s", self.service, self.method, code.name)
                finish(span, code)
                raise
            except BaseException as exc:
                # An abort raises after setting the code; anything else is UNKNOWN to gRPC.
                finish(span, status_of(context) or grpc.StatusCode.UNKNOWN, exc)
                raise
            finish(span, status_of(context) or grpc.StatusCode.OK)

    def unary(self, behaviour: Unary) -> Unary:
        async def traced(request: Any, context: Context) -> Any:
            with self.open(context):
                return await behaviour(request, context)

        return traced

    def streaming(self, behaviour: StreamHandler) -> Callable[[Any, Context], Awaitable[None]]:
        # A coroutine that writes the responses, not a generator (see `streams`): the span
        # is entered and left in the call's own task, however the call ends.
        async def traced(request: Any, context: Context) -> None:
            with self.open(context):
                await respond(behaviour, request, context)

        return traced


class TracingInterceptor(_Interceptor):
    """Wraps unary and server-streaming handlers of ragstream's services in RpcSpans."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(details)
        if handler is None or not details.method.startswith(TRACED_PREFIX):
            return handler
        service, _, method = details.method[1:].rpartition("/")
        rpc = RpcSpan(service, method, parent_context(details.invocation_metadata))
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                rpc.unary(handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                rpc.streaming(handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # the API has no client-streaming methods
