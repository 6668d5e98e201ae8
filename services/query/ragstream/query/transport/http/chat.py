"""The OpenAI-compatible chat endpoint: `POST /v1/chat/completions` and `GET /v1/models`.

A chat front-end (Open WebUI, any OpenAI client) asks the index as it would ask a model. A
completion is a Query (a streamed one a StreamQuery) served by the Query and StreamQuery
routes' own servicer methods, behind the same gate: the bearer token (the client's API key),
the request rules and tenancy, admission in the queries family, and the `grpc-timeout`
deadline. The workspace is the `X-Ragstream-Workspace` header's, else the token's when it
grants exactly one, else the server's default. Refusals are OpenAI error objects
(`{"error": {"message", "type", "param", "code"}}`) with the HTTP code the gate's status
maps to; `param` names the field at fault in the chat request's own terms.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from aiohttp import web
from google.rpc import code_pb2, error_details_pb2

from ragstream.query.transport.auth import Grant
from ragstream.query.transport.gate import Deadline, Gate
from ragstream.query.transport.http.chat_wire import (
    ChatError,
    ChatRequest,
    Completion,
    error_body,
    model_list,
    parse_chat,
    reference_fields,
    references_section,
)
from ragstream.query.transport.http.routes import Route, deadline
from ragstream.query.transport.http.status import HTTP_STATUS, refusal_headers
from ragstream.query.transport.rejections import Rejected
from ragstream.v1 import query_pb2

log = logging.getLogger(__name__)
WORKSPACE_HEADER = "X-Ragstream-Workspace"
QUERY_RPC = "/ragstream.v1.QueryService/Query"
STREAM_RPC = "/ragstream.v1.QueryService/StreamQuery"
_KINDS = {
    code_pb2.INVALID_ARGUMENT: "invalid_request_error",
    code_pb2.UNAUTHENTICATED: "authentication_error",
    code_pb2.PERMISSION_DENIED: "permission_error",
    code_pb2.NOT_FOUND: "not_found_error",
    code_pb2.RESOURCE_EXHAUSTED: "rate_limit_error",
}
_PARAMS = (
    ("workspace", WORKSPACE_HEADER, "the workspace"),
    ("query", "messages", "the question (the last message)"),
    ("params.conversation_history", "messages", "the earlier messages"),
    ("params.user_prompt", "messages", "the system messages"),
)
"""Query fields the gate may name: (field prefix, the chat request's param, what it is)."""


def add_chat_routes(app: web.Application, routes: Sequence[Route], gate: Gate) -> None:
    """Serves the chat endpoint when the Query and StreamQuery routes are served."""
    by_rpc = {route.rpc: route for route in routes}
    if QUERY_RPC not in by_rpc or STREAM_RPC not in by_rpc:
        return
    chat = ChatEndpoint(by_rpc[QUERY_RPC], by_rpc[STREAM_RPC], gate)
    app.router.add_post("/v1/chat/completions", chat.complete)
    app.router.add_get("/v1/models", chat.models, allow_head=False)


class ChatEndpoint:
    def __init__(self, query: Route, stream: Route, gate: Gate) -> None:
        self._query, self._stream, self._gate = query, stream, gate
        self._started = int(time.time())

    async def models(self, request: web.Request) -> web.Response:
        try:
            self._gate.authenticate(request.headers.items())
        except Rejected as rejected:
            return chat_refusal(rejected)
        return web.json_response(model_list(self._started))

    async def complete(self, request: web.Request) -> web.StreamResponse:
        try:
            grant = self._gate.authenticate(request.headers.items())  # before the body
            chat = parse_chat(await request.read())
            route = self._stream if chat.stream else self._query
            message = route.request(
                workspace=request.headers.get(WORKSPACE_HEADER) or sole_workspace(grant),
                query=chat.question,
                params=chat.params(),
            )
            self._gate.check(message, grant)
            allowed = deadline(request.headers)
            running = self._gate.running(route.rpc, allowed, message)
            context = Deadline.after(allowed)
            if chat.stream:
                events = route.call(message, context)
                return await stream(request, running, events, Completion.start(chat.model))
            async with running:
                reply = await route.call(message, context)
            return web.json_response(answer(chat, reply))
        except ChatError as error:
            return _error(400, error.message, "invalid_request_error", error.param)
        except Rejected as rejected:
            return chat_refusal(rejected)


def sole_workspace(grant: Grant | None) -> str:
    """The workspace a token grants when it grants exactly one ("" otherwise: the default)."""
    if grant is None or grant.all_workspaces or len(grant.workspaces) != 1:
        return ""
    return next(iter(grant.workspaces))


def answer(chat: ChatRequest, reply: query_pb2.QueryResponse) -> dict[str, Any]:
    return Completion.start(chat.model).reply(reply.answer, list(reply.references))


async def stream(
    request: web.Request,
    running: AbstractAsyncContextManager[None],
    events: AsyncGenerator[query_pb2.StreamQueryResponse, None],
    completion: Completion,
) -> web.StreamResponse:
    """StreamQuery's events as chat.completion.chunk server-sent events: the role first, the
    answer's deltas, the references section (with the `references` field), the stop, and
    `[DONE]`. A refusal before the first event is an ordinary error response; a failure
    after it an `error` event, which OpenAI's clients raise as an APIError."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8"})
    references: list[query_pb2.Reference] = []
    try:
        async with running, contextlib.aclosing(events) as items:
            async for item in items:
                if not response.prepared:
                    await response.prepare(request)
                    await response.write(_data(completion.chunk({"role": "assistant"})))
                kind = item.WhichOneof("event")
                if kind == "delta":
                    await response.write(_data(completion.chunk({"content": item.delta})))
                elif kind == "end":  # the passages the answer cites, as the unary reply has
                    references = list(item.end.references)
    except Rejected as rejected:
        if not response.prepared:
            raise
        await response.write(_data(_openai_error(rejected)))
        return await _end(response)
    except Exception:  # the headers are sent: the stream itself must say it failed
        if not response.prepared:
            raise
        log.exception("%s failed after its first event", request.path)
        failed = error_body("the server failed; see its log", "server_error", None, None)
        await response.write(_data(failed))
        return await _end(response)
    closing = completion.chunk({"content": references_section(references)}, finish="stop")
    await response.write(_data({**closing, "references": reference_fields(references)}))
    await response.write(b"data: [DONE]\n\n")
    return await _end(response)


async def _end(response: web.StreamResponse) -> web.StreamResponse:
    await response.write_eof()
    return response


def _data(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n".encode()


def chat_refusal(rejected: Rejected) -> web.Response:
    status = HTTP_STATUS.get(rejected.code, 500)
    return web.json_response(
        _openai_error(rejected), status=status, headers=refusal_headers(rejected)
    )


def _openai_error(rejected: Rejected) -> dict[str, Any]:
    kind = _KINDS.get(rejected.code, "server_error")
    code = code_pb2.Code.Name(rejected.code).lower()
    param, message = _blamed(rejected)
    return error_body(message, kind, param, code)


def _blamed(rejected: Rejected) -> tuple[str | None, str]:
    """(param, message): the first field the gate blamed, in the chat request's terms."""
    for detail in rejected.details:
        if isinstance(detail, error_details_pb2.BadRequest) and detail.field_violations:
            violation = detail.field_violations[0]
            for prefix, param, what in _PARAMS:
                if violation.field.startswith(prefix):
                    return param, f"{param}: {what} {violation.description}"
            return violation.field, f"{violation.field} {violation.description}"
    return None, rejected.message


def _error(status: int, message: str, kind: str, param: str | None) -> web.Response:
    return web.json_response(error_body(message, kind, param, None), status=status)
