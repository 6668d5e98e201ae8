"""Refusals over HTTP: a google.rpc.Status in its JSON form, with the matching HTTP code.

The codes map as google.rpc.Code documents them (and as grpc-gateway maps them), so a
client reads the same `code`, `message` and `details` (BadRequest field violations, RetryInfo)
as a gRPC client gets in its status. 401 also says `WWW-Authenticate: Bearer`; 429 says
`Retry-After` (whole seconds, rounded up). Refusals made by the port itself (an unknown
route, a body too large, a forged browser request) are google.rpc.Status JSON too.
"""

from __future__ import annotations

import math

from aiohttp import web
from google.rpc import code_pb2

from ragstream.query.transport.http.codec import to_json
from ragstream.query.transport.rejections import Rejected

HTTP_STATUS: dict[int, int] = {
    code_pb2.OK: 200,
    code_pb2.CANCELLED: 499,
    code_pb2.UNKNOWN: 500,
    code_pb2.INVALID_ARGUMENT: 400,
    code_pb2.DEADLINE_EXCEEDED: 504,
    code_pb2.NOT_FOUND: 404,
    code_pb2.ALREADY_EXISTS: 409,
    code_pb2.PERMISSION_DENIED: 403,
    code_pb2.UNAUTHENTICATED: 401,
    code_pb2.RESOURCE_EXHAUSTED: 429,
    code_pb2.FAILED_PRECONDITION: 400,
    code_pb2.ABORTED: 409,
    code_pb2.OUT_OF_RANGE: 400,
    code_pb2.UNIMPLEMENTED: 501,
    code_pb2.INTERNAL: 500,
    code_pb2.UNAVAILABLE: 503,
    code_pb2.DATA_LOSS: 500,
}


def refusal(rejected: Rejected) -> web.Response:
    return web.json_response(
        to_json(rejected.status(), defaults=False),
        status=HTTP_STATUS.get(rejected.code, 500),
        headers=refusal_headers(rejected),
    )


def refusal_headers(rejected: Rejected) -> dict[str, str]:
    """What a refusal says in headers besides its body: the auth scheme, when to retry."""
    headers = {}
    if rejected.code == code_pb2.UNAUTHENTICATED:
        headers["WWW-Authenticate"] = 'Bearer realm="ragstream"'
    if rejected.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, math.ceil(rejected.retry_after_s)))
    return headers


def status_response(
    http_status: int, code: int, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    """A refusal made here, not by the gate: a google.rpc.Status with no details."""
    body = {"code": code, "message": message}
    return web.json_response(body, status=http_status, headers=headers)
