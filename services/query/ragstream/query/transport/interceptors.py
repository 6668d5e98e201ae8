"""The gate in front of every QueryService and IngestService call.

Each call passes, in this order: authentication (bearer token -> UNAUTHENTICATED), the
request rules of `validation` (INVALID_ARGUMENT with google.rpc.BadRequest), tenancy (the
token must grant the request's workspace -> PERMISSION_DENIED), admission (a bounded queue
per expensive family -> RESOURCE_EXHAUSTED with google.rpc.RetryInfo), and then runs the
handler under the call's deadline (-> DEADLINE_EXCEEDED).

Why one server interceptor rather than a call at the top of each handler: it sees every
method of both services, including methods added later, so no handler can forget a check or
run them in another order; a request type without rules is refused, not waved through; and
the handlers stay pure converters (proto in, domain call, proto out). Health checks and
reflection pass untouched, so probes need no token.

The deadline: grpc.aio cancels a handler whose client gave up, and the gate also bounds the
handler by `context.time_remaining()` with `asyncio.timeout`. Either way the cancellation
reaches every await below it (embedding scheduler, search, LLM stream, reranker), and the
openai client closes its HTTP request, so the model stops generating for nobody.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import grpc
from google.protobuf.message import Message
from google.rpc import code_pb2

from ragstream.query.transport.admission import Admission, Overloaded
from ragstream.query.transport.auth import TokenAuthenticator, Unauthenticated
from ragstream.query.transport.convert import workspace_of
from ragstream.query.transport.errors import abort_invalid, abort_overloaded, abort_with
from ragstream.query.transport.validation import Limits, validate

log = logging.getLogger(__name__)
GATED_PREFIX = "/ragstream."
QUERIES = "queries"
PUBLISHES = "publishes"
FAMILIES: dict[str, str] = {
    "/ragstream.v1.QueryService/Query": QUERIES,
    "/ragstream.v1.QueryService/StreamQuery": QUERIES,
    "/ragstream.v1.QueryService/Retrieve": QUERIES,
    "/ragstream.v1.IngestService/PublishDocuments": PUBLISHES,
    "/ragstream.v1.IngestService/DeleteDocuments": PUBLISHES,
}
"""The expensive methods and the admission family each belongs to; the rest (status,
listing, progress) are cheap reads and run at once."""
EMPTY_MEANS_ALL = frozenset({"ragstream.v1.GetIndexingProgressRequest"})
"""Requests whose empty workspace means every workspace (not the default one): they need a
token granted "*"."""

Context = grpc.aio.ServicerContext[Any, Any]
Unary = Callable[[Any, Context], Awaitable[Any]]
Streaming = Callable[[Any, Context], AsyncIterator[Any]]


class Gate(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    def __init__(
        self,
        limits: Limits,
        default_workspace: str,
        authenticator: TokenAuthenticator | None = None,
        admissions: Mapping[str, Admission] | None = None,
    ) -> None:
        self._limits = limits
        self._default_workspace = default_workspace
        self._auth = authenticator
        self._admissions = dict(admissions or {})

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(details)
        if handler is None or not details.method.startswith(GATED_PREFIX):
            return handler
        admission = self._admissions.get(FAMILIES.get(details.method, ""))
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(handler.unary_unary, admission),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._streaming(handler.unary_stream, admission),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # the API has no client-streaming methods

    def _unary(self, behaviour: Unary, admission: Admission | None) -> Unary:
        async def gated(request: Message, context: Context) -> Any:
            await self.screen(request, context)
            async with running(context, admission):
                return await behaviour(request, context)

        return gated

    def _streaming(self, behaviour: Streaming, admission: Admission | None) -> Streaming:
        async def gated(request: Message, context: Context) -> AsyncIterator[Any]:
            await self.screen(request, context)
            async with running(context, admission):
                async for response in behaviour(request, context):
                    yield response

        return gated

    async def screen(self, request: Message, context: Context) -> None:
        """Authentication, request rules and tenancy; aborts the call at the first failure."""
        grant = None
        if self._auth is not None:
            try:
                grant = self._auth.authenticate(context.invocation_metadata())
            except Unauthenticated as exc:
                await abort_with(context, code_pb2.UNAUTHENTICATED, str(exc))
        violations = validate(request, self._limits)
        if violations:
            await abort_invalid(context, violations)
        if grant is None or "workspace" not in request.DESCRIPTOR.fields_by_name:
            return  # workspace-less calls need only a known token
        named: str = request.workspace  # type: ignore[attr-defined]
        if not named and request.DESCRIPTOR.full_name in EMPTY_MEANS_ALL:
            if not grant.all_workspaces:
                log.info("token %r denied the all-workspace total", grant.name)
                await abort_with(
                    context,
                    code_pb2.PERMISSION_DENIED,
                    "an empty workspace asks for every workspace, which needs a token granted "
                    "'*': name the workspace",
                )
            return
        workspace = workspace_of(named, self._default_workspace)
        if not grant.allows(workspace):
            log.info("token %r denied workspace %r", grant.name, workspace)
            await abort_with(
                context,
                code_pb2.PERMISSION_DENIED,
                f"this token does not grant workspace {workspace!r}",
            )


@contextlib.asynccontextmanager
async def running(context: Context, admission: Admission | None) -> AsyncIterator[None]:
    """Admission and the deadline around a handler; the deadline covers the queue wait."""
    scope = asyncio.timeout(context.time_remaining())
    try:
        async with scope, admission.slot() if admission else contextlib.nullcontext():
            yield
    except Overloaded as exc:
        await abort_overloaded(context, exc.family, exc.retry_after_s)
    except TimeoutError:
        if not scope.expired():
            raise  # a timeout of some inner call, not the deadline: the handler's to report
        await abort_with(context, code_pb2.DEADLINE_EXCEEDED, "the call's deadline passed")


def admissions(queries: tuple[int, int], publishes: tuple[int, int]) -> dict[str, Admission]:
    """One Admission per family from (concurrency, queue) pairs."""
    return {
        QUERIES: Admission(QUERIES, *queries),
        PUBLISHES: Admission(PUBLISHES, *publishes),
    }
