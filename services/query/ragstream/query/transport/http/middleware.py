"""What wraps every HTTP request: a server span, JSON errors, and CORS when configured.

- Tracing: each API request is a SERVER span continuing the caller's W3C `traceparent`, with
  the HTTP conventions' attributes (http.request.method, http.route, url.path,
  http.response.status_code) and the RPC it maps to (rpc.service, rpc.method); the stage
  spans below are its children, as under a gRPC call. 5xx answers mark it failed.
- Errors: an unknown route or method under /v1/, a body too large or unreadable, answers a
  google.rpc.Status JSON like every other refusal, with its own 4xx code (a 405 with
  `Allow`); an unexpected exception is logged and answers 500 UNKNOWN.
- CORS: off unless `server.http_cors_origins` lists origins (or "*"); then those origins may
  call the API from a browser, with the Authorization, Content-Type, grpc-timeout and
  traceparent headers, and preflight requests are answered here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from aiohttp import web
from google.rpc import code_pb2
from opentelemetry import context as otel_context
from opentelemetry import propagate
from opentelemetry.trace import SpanKind, Status, StatusCode

from ragstream.common.telemetry import mark_failed, tracer
from ragstream.query.transport.http.status import status_response

log = logging.getLogger(__name__)
API_PREFIX = "/v1/"
HTTP_FAULTS: dict[int, int] = {
    404: code_pb2.NOT_FOUND,
    # The method is one this route does not serve: google.rpc.Code's UNIMPLEMENTED ("not
    # implemented or not supported") as grpc-gateway answers a 405, the HTTP code staying the
    # more precise 405, whose `Allow` header lists the methods it does serve.
    405: code_pb2.UNIMPLEMENTED,
    # A body over server.max_message_mb: RESOURCE_EXHAUSTED, what the gRPC port answers a
    # message over the same limit, so both ports refuse it alike; no RetryInfo, as retrying
    # the same body cannot succeed.
    413: code_pb2.RESOURCE_EXHAUSTED,
}
"""The google.rpc code of each client fault aiohttp raises; any other 4xx (a body it could
not read, e.g. a broken Content-Encoding) is INVALID_ARGUMENT."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
ALLOWED_HEADERS = "authorization, content-type, grpc-timeout, traceparent, tracestate"


def _route(request: web.Request) -> str:
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else request.path


@web.middleware
async def traced(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith(API_PREFIX):
        return await handler(request)
    parent = propagate.extract(dict(request.headers), context=otel_context.Context())
    route = _route(request)
    attributes = {"http.request.method": request.method, "http.route": route}
    with tracer().start_as_current_span(
        f"{request.method} {route}",
        context=parent,
        kind=SpanKind.SERVER,
        attributes={**attributes, "url.path": request.path},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            response = await handler(request)
        except asyncio.CancelledError:
            span.set_attribute("http.response.status_code", 499)  # the client went away
            raise
        except BaseException as exc:
            mark_failed(span, exc)
            raise
        span.set_attribute("http.response.status_code", response.status)
        if response.status >= 500:
            span.set_status(Status(StatusCode.ERROR, str(response.status)))
        return response


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400 or not request.path.startswith(API_PREFIX):
            raise
        fault = code_pb2.INVALID_ARGUMENT if exc.status < 500 else code_pb2.UNKNOWN
        code = HTTP_FAULTS.get(exc.status, fault)
        allow = {"Allow": exc.headers["Allow"]} if "Allow" in exc.headers else None
        message = f"{request.method} {request.path}: {_describe(exc)}"
        return status_response(exc.status, code, message, allow)
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return status_response(500, code_pb2.UNKNOWN, "the server failed; see its log")


def _describe(exc: web.HTTPException) -> str:
    """aiohttp's text when it says more than the status line (the body limit, in bytes)."""
    text = exc.text or ""
    return exc.reason if text.startswith(f"{exc.status}:") else text


def install_cors(app: web.Application, origins: Sequence[str]) -> None:
    """Lets `origins` call the API from browsers: their preflights are answered, and every
    response to them (streams too: headers are set as a response is prepared) allows them."""
    allowed = frozenset(origins)

    def permitted(request: web.Request) -> str | None:
        origin = request.headers.get("Origin")
        ok = origin is not None and ("*" in allowed or origin in allowed)
        return origin if ok else None

    @web.middleware
    async def preflight(request: web.Request, handler: Handler) -> web.StreamResponse:
        asked = "Access-Control-Request-Method" in request.headers
        if request.method != "OPTIONS" or not asked or permitted(request) is None:
            return await handler(request)
        response = web.Response(status=204)
        response.headers["Access-Control-Allow-Methods"] = "GET, POST"
        response.headers["Access-Control-Allow-Headers"] = ALLOWED_HEADERS
        response.headers["Access-Control-Max-Age"] = "600"
        return response

    async def allow(request: web.Request, response: web.StreamResponse) -> None:
        origin = permitted(request)
        if origin is not None:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"

    app.middlewares.append(preflight)
    app.on_response_prepare.append(allow)
