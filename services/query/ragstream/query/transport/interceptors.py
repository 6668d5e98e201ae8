"""The gate (`gate.Gate`) in front of every gRPC call to ragstream's services.

Why one server interceptor rather than a call at the top of each handler: it sees every
method of every service, including methods added later, so no handler can forget a check or
run them in another order; a request type without rules is refused, not waved through; and
the handlers stay pure converters (proto in, domain call, proto out). Health checks and
reflection pass untouched, so probes need no token.

The deadline: grpc.aio cancels a handler whose client gave up, and the gate also bounds the
handler by `context.time_remaining()`. A `Rejected` from the gate or from a handler becomes
the call's status with its structured details.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import Message

from ragstream.query.transport.errors import abort_rejected
from ragstream.query.transport.gate import FAMILIES, PUBLISHES, QUERIES, Gate, admissions
from ragstream.query.transport.rejections import Rejected

__all__ = ["FAMILIES", "PUBLISHES", "QUERIES", "Gate", "GrpcGate", "admissions"]
GATED_PREFIX = "/ragstream."

Context = grpc.aio.ServicerContext[Any, Any]
Unary = Callable[[Any, Context], Awaitable[Any]]
Streaming = Callable[[Any, Context], AsyncIterator[Any]]


class GrpcGate(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(details)
        if handler is None or not details.method.startswith(GATED_PREFIX):
            return handler
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, details.method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(handler.unary_stream, details.method),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # the API has no client-streaming methods

    def _unary(self, behaviour: Unary, method: str) -> Unary:
        async def gated(request: Message, context: Context) -> Any:
            try:
                self.gate.screen(request, context.invocation_metadata())
                async with self.gate.running(method, context.time_remaining()):
                    return await behaviour(request, context)
            except Rejected as rejected:
                await abort_rejected(context, rejected)

        return gated

    def _streaming(self, behaviour: Streaming, method: str) -> Streaming:
        async def gated(request: Message, context: Context) -> AsyncIterator[Any]:
            try:
                self.gate.screen(request, context.invocation_metadata())
                async with self.gate.running(method, context.time_remaining()):
                    async for response in behaviour(request, context):
                        yield response
            except Rejected as rejected:
                await abort_rejected(context, rejected)

        return gated
