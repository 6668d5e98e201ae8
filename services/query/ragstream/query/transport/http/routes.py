"""The HTTP/JSON routes: each is one RPC of the gRPC services, served by the same servicer.

A route authenticates the caller, then parses its request message (JSON body, or a query
string for the reads), passes the same gate as a gRPC call (`gate.Gate.check`, then
admission and the deadline in `gate.Gate.running`), and calls the servicer's method with
the message, exactly as the gRPC server does; the reply is the response message in
protobuf's JSON mapping. StreamQuery is served as server-sent events. The deadline comes
from a `grpc-timeout` header in gRPC's format (e.g. `30S`, `500m`), as grpc-gateway reads
it; without one the call has none, and a client that disconnects cancels it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import hdrs, web
from aiohttp.web_protocol import RequestPayloadError
from google.protobuf import message_factory
from google.protobuf.message import Message
from opentelemetry import trace

from ragstream.query.transport.gate import Deadline, Gate
from ragstream.query.transport.http import sse
from ragstream.query.transport.http.codec import parse_body, parse_query, to_json
from ragstream.query.transport.http.status import refusal
from ragstream.query.transport.rejections import Rejected, invalid
from ragstream.query.transport.validation import Violation
from ragstream.v1 import graph_pb2, ingest_pb2, query_pb2

ROUTES: tuple[tuple[str, str, str], ...] = (
    ("/v1/query", "QueryService", "Query"),
    ("/v1/query/stream", "QueryService", "StreamQuery"),
    ("/v1/retrieve", "QueryService", "Retrieve"),
    ("/v1/documents", "IngestService", "PublishDocuments"),
    ("/v1/documents/delete", "IngestService", "DeleteDocuments"),
    ("/v1/graph/import", "IngestService", "ImportGraph"),
    ("/v1/documents/status", "IngestService", "GetDocumentStatus"),
    ("/v1/documents/list", "IngestService", "ListDocuments"),
    ("/v1/indexing-progress", "IngestService", "GetIndexingProgress"),
    ("/v1/graph/entities", "GraphService", "SearchEntities"),
    ("/v1/graph/entity", "GraphService", "GetEntity"),
    ("/v1/graph/relation", "GraphService", "GetRelation"),
    ("/v1/graph/neighbourhood", "GraphService", "GetNeighbourhood"),
    ("/v1/graph/stats", "GraphService", "GetGraphStats"),
    ("/v1/graph/communities", "GraphService", "ListCommunities"),
    ("/v1/graph/community", "GraphService", "GetCommunity"),
    ("/v1/graph/entity/communities", "GraphService", "GetEntityCommunities"),
)
"""(path, service, method). Every route takes POST with a JSON body; the reads (the methods
in READS) also take GET with the request's fields as query parameters."""
READS = frozenset(
    {
        "GetDocumentStatus",
        "ListDocuments",
        "GetIndexingProgress",
        "SearchEntities",
        "GetEntity",
        "GetRelation",
        "GetNeighbourhood",
        "GetGraphStats",
        "ListCommunities",
        "GetCommunity",
        "GetEntityCommunities",
    }
)
_FILES = {"QueryService": query_pb2, "IngestService": ingest_pb2, "GraphService": graph_pb2}
_TIMEOUT = re.compile(r"^(\d{1,8})([HMSmun])$")
_UNIT_S = {"H": 3600.0, "M": 60.0, "S": 1.0, "m": 1e-3, "u": 1e-6, "n": 1e-9}
TIMEOUT_HEADER = "grpc-timeout"

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass(frozen=True, slots=True)
class Route:
    path: str
    rpc: str
    """The gRPC method path, e.g. /ragstream.v1.QueryService/Query (admission family)."""
    request: type[Message]
    call: Callable[[Any, Deadline], Any]
    """The servicer's method: (request, context) -> response, or an async iterator."""
    streaming: bool
    read: bool


def build_routes(servicers: dict[str, object]) -> list[Route]:
    """The routes of the services given, by service name (QueryService, ...)."""
    routes = []
    for path, service, method in ROUTES:
        if service not in servicers:
            continue
        descriptor = _FILES[service].DESCRIPTOR.services_by_name[service]
        rpc = descriptor.methods_by_name[method]
        routes.append(
            Route(
                path=path,
                rpc=f"/{descriptor.full_name}/{method}",
                request=message_factory.GetMessageClass(rpc.input_type),
                call=getattr(servicers[service], method),
                streaming=rpc.server_streaming,
                read=method in READS,
            )
        )
    return routes


def deadline(headers: Any) -> float | None:
    """Seconds the caller allows, from `grpc-timeout`; None without the header."""
    value = headers.get(TIMEOUT_HEADER)
    if value is None:
        return None
    match = _TIMEOUT.match(value.strip())
    if match is None:
        violation = Violation(TIMEOUT_HEADER, "must be 1 to 8 digits and a unit: H M S m u n")
        raise invalid([violation], "invalid header")
    return int(match.group(1)) * _UNIT_S[match.group(2)]


def handler(route: Route, gate: Gate) -> Handler:
    service, _, method = route.rpc[1:].rpartition("/")

    async def handle(request: web.Request) -> web.StreamResponse:
        trace.get_current_span().set_attributes({"rpc.service": service, "rpc.method": method})
        try:
            grant = gate.authenticate(request.headers.items())  # before reading the body
            if request.method == "GET":
                message = parse_query(request.query, route.request())
            else:
                message = parse_body(await read_body(request), route.request())
            gate.check(message, grant)
            allowed = deadline(request.headers)
            context = Deadline.after(allowed)
            running = gate.running(route.rpc, allowed, message)
            if route.streaming:
                return await sse.stream(request, running, route.call(message, context))
            async with running:
                reply = await route.call(message, context)
            return web.json_response(to_json(reply))
        except Rejected as rejected:
            return refusal(rejected)

    return handle


async def read_body(request: web.Request) -> bytes:
    """The body, decoded from its Content-Encoding; one that does not decode is the
    client's fault (INVALID_ARGUMENT), not the server's."""
    try:
        return await request.read()
    except RequestPayloadError as exc:
        violation = Violation("Content-Encoding", "names an encoding the body is not in")
        raise invalid([violation], "unreadable body") from exc


def options(methods: str) -> Handler:
    """OPTIONS: the methods a route serves (CORS preflights are answered before, when the
    origin is one of server.http_cors_origins)."""

    async def answer(request: web.Request) -> web.StreamResponse:
        return web.Response(status=204, headers={hdrs.ALLOW: methods})

    return answer


def add_routes(app: web.Application, routes: list[Route], gate: Gate) -> None:
    # Each imports this module.
    from ragstream.query.transport.http.chat import add_chat_routes
    from ragstream.query.transport.http.upload import add_upload_route

    add_chat_routes(app, routes, gate)
    add_upload_route(app, routes, gate)
    for route in routes:
        handle = handler(route, gate)
        app.router.add_post(route.path, handle)
        if route.read:
            app.router.add_get(route.path, handle, allow_head=False)
        methods = "GET, POST, OPTIONS" if route.read else "POST, OPTIONS"
        app.router.add_route(hdrs.METH_OPTIONS, route.path, options(methods))
