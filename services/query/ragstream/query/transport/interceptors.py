"""The gate (`gate.Gate`) in front of every gRPC call to ragstream's services.

Why one server interceptor rather than a call at the top of each handler: it sees every
method of every service, including methods added later, so no handler can forget a check or
run them in another order; a request type without rules is refused, not waved through; and
the handlers stay pure converters (proto in, domain call, proto out). Health checks and
reflection pass untouched, so probes need no token.

The interceptor registers its handlers without a request deserializer and decodes the bytes
itself, after authentication: grpc.aio would otherwise decode before any interceptor code
runs, so a body without a token would be parsed, and an undecodable one would end as UNKNOWN
with a traceback in the log. Streaming handlers become coroutines that write their responses
(`streams.respond`), so a cancelled stream unwinds in its own task.

The deadline: gRPC's core cancels the handler's task when the call's deadline passes or its
client gives up. A `Rejected` from the gate or from a handler becomes the call's status with
its structured details.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

import grpc
from google.protobuf.message import DecodeError, Message

from ragstream.query.transport import rejections
from ragstream.query.transport.errors import abort_rejected
from ragstream.query.transport.gate import FAMILIES, PUBLISHES, QUERIES, Gate, admissions
from ragstream.query.transport.rejections import Rejected
from ragstream.query.transport.streams import StreamHandler, respond

__all__ = ["FAMILIES", "PUBLISHES", "QUERIES", "Gate", "GrpcGate", "admissions"]
log = logging.getLogger(__name__)
GATED_PREFIX = "/ragstream."

Context = grpc.aio.ServicerContext[Any, Any]
Unary = Callable[[Any, Context], Awaitable[Any]]
Decode = Callable[[bytes], Message]


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
        decode = handler.request_deserializer
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, decode, details.method),
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(handler.unary_stream, decode, details.method),
                response_serializer=handler.response_serializer,
            )
        return handler  # the API has no client-streaming methods

    def _unary(self, behaviour: Unary, decode: Decode, method: str) -> Unary:
        async def gated(body: bytes, context: Context) -> Any:
            try:
                request = self.screen(body, decode, context)
                async with self._running(method, request, context):
                    return await behaviour(request, context)
            except Rejected as rejected:
                await abort_rejected(context, rejected)

        return gated

    def _streaming(
        self, behaviour: StreamHandler, decode: Decode, method: str
    ) -> Callable[[bytes, Context], Awaitable[None]]:
        async def gated(body: bytes, context: Context) -> None:
            try:
                request = self.screen(body, decode, context)
                async with self._running(method, request, context):
                    await respond(behaviour, request, context)
            except Rejected as rejected:
                await abort_rejected(context, rejected)

        return gated

    def screen(self, body: bytes, decode: Decode, context: Context) -> Message:
        """The decoded request, once its caller is known and it passed the gate's checks."""
        grant = self.gate.authenticate(context.invocation_metadata())
        try:
            request = decode(body)
        except DecodeError as exc:
            log.debug("undecodable request: %s", exc)
            raise rejections.undecodable(str(exc)) from None
        self.gate.check(request, grant)
        return request

    def _running(
        self, method: str, request: Message, context: Context
    ) -> AbstractAsyncContextManager[None]:
        return self.gate.running(method, context.time_remaining(), request, timer=False)
