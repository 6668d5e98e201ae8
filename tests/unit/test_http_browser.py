"""The HTTP port against what a browser can be made to send, and against client faults: a
real aiohttp server with the real gate (auth off, as `serve` defaults) over servicers that
record the writes that reach them; and the event stream's encoding, property-tested."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from ragstream.common.config import ServerConfig
from ragstream.query.transport.gate import CallContext, Gate
from ragstream.query.transport.http import sse
from ragstream.query.transport.http.browser import SECURITY_HEADERS, Hosts, hostname
from ragstream.query.transport.http.codec import MAX_DEPTH
from ragstream.query.transport.http.routes import build_routes
from ragstream.query.transport.http.server import HttpServer, build_app
from ragstream.query.transport.validation import Limits
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc
from tests.support.sse import events

CORS = "https://app.example"
PUBLISH = {"documents": [{"docId": "d", "content": "text"}]}


class Writes(ingest_pb2_grpc.IngestServiceServicer):
    def __init__(self) -> None:
        self.published: list[str] = []

    async def PublishDocuments(self, request: Any, context: CallContext) -> Any:
        self.published += [d.doc_id for d in request.documents]
        return ingest_pb2.PublishDocumentsResponse()


class Stream(query_pb2_grpc.QueryServiceServicer):
    async def StreamQuery(self, request: Any, context: CallContext) -> AsyncIterator[Any]:
        yield query_pb2.StreamQueryResponse(delta=request.query)


@pytest.fixture
async def port() -> AsyncIterator[tuple[str, Writes]]:
    writes = Writes()  # type: ignore[abstract]  # only publishing is exercised
    servicers = {"IngestService": writes, "QueryService": Stream()}  # type: ignore[abstract]
    gate = Gate(Limits(max_document_bytes=1000), "default")
    hosts = Hosts.of("127.0.0.1", ("ragstream.example", ".corp.example"))
    server = HttpServer("127.0.0.1:0", build_app(build_routes(servicers), gate, (CORS,), 1, hosts))
    await server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", writes
    finally:
        await server.stop()


async def call(method: str, url: str, **options: Any) -> tuple[int, dict[str, str], Any]:
    async with aiohttp.ClientSession() as session, session.request(method, url, **options) as reply:
        text = await reply.text()
        body = json.loads(text) if reply.content_type == "application/json" else text
        return reply.status, dict(reply.headers), body


def test_host_names_are_read_and_matched() -> None:
    assert [hostname(h) for h in ("A.Example:80", "[::1]:8080", "x.", "a b", "u@h")] == [
        "a.example",
        "::1",
        "x",
        None,
        None,
    ]
    hosts = Hosts.of("0.0.0.0", ("ragstream.example", ".corp.example"))
    allowed = ("localhost:9", "10.1.2.3:80", "[::1]", "ragstream.example", "a.corp.example")
    assert all(hosts.allow(h) for h in allowed)
    refused = ("attacker.example:8088", "corp.example.evil", "notcorp.example", "")
    assert not any(hosts.allow(h) for h in refused)
    assert Hosts.of("127.0.0.1", ("*",)).allow("anything.example")


def test_allowed_hosts_are_names_without_scheme_or_port() -> None:
    names = ("ragstream.example.com", ".example.com", "*")
    assert ServerConfig(http_allowed_hosts=names).http_allowed_hosts == names
    for wrong in ("http://ragstream.example.com", "ragstream.example.com:8080", "a b", ""):
        with pytest.raises(ValidationError, match="without scheme or port"):
            ServerConfig(http_allowed_hosts=(wrong,))


async def test_forged_hosts_and_origins_are_refused_before_any_write(
    port: tuple[str, Writes],
) -> None:
    base, writes = port
    url = f"{base}/v1/documents"
    for headers, status in (
        ({"Host": "attacker.example:8088"}, 403),  # DNS rebinding
        ({"Origin": "http://127.0.0.1:1"}, 403),  # another local port
        ({"Origin": "null"}, 403),  # a sandboxed frame or a file
        ({"Origin": "http://[bad"}, 403),
    ):
        got, _, body = await call("POST", url, json=PUBLISH, headers=headers)
        assert (got, body["code"]) == (status, 7), headers
        assert "Host" in body["message"] or "Origin" in body["message"]
    for data, kind in ((b"{}", "text/plain"), (b"a=b", "application/x-www-form-urlencoded")):
        got, _, body = await call("POST", url, data=data, headers={"Content-Type": kind})
        assert (got, body["code"]) == (415, 3) and "application/json" in body["message"]
    got, _, _ = await call("POST", url, skip_auto_headers=["Content-Type"])
    assert got == 415  # no type at all, as a no-cors fetch without a body sends
    assert writes.published == []
    for headers in ({}, {"Origin": base}, {"Origin": CORS}, {"Host": "x.corp.example"}):
        got, _, _ = await call("POST", url, json=PUBLISH, headers=headers)
        assert got == 200, headers
    assert writes.published == ["d"] * 4


async def test_every_answer_carries_the_security_headers(port: tuple[str, Writes]) -> None:
    base, _ = port
    for method, path in (("GET", "/"), ("GET", "/console/main.js"), ("GET", "/v1/x")):
        _, headers, _ = await call(method, base + path)
        assert SECURITY_HEADERS.items() <= headers.items(), path
    _, headers, _ = await call("POST", f"{base}/v1/query/stream", json={"query": "q"})
    assert headers["Content-Type"].startswith("text/event-stream")
    assert headers["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in str(headers)


async def test_client_faults_are_4xx_with_their_google_rpc_code(
    port: tuple[str, Writes], caplog: pytest.LogCaptureFixture
) -> None:
    base, writes = port
    url = f"{base}/v1/documents"
    deep = b'{"documents": ' + b"[" * 1000 + b"]" * 1000 + b"}"
    got, _, body = await call("POST", url, data=deep, headers={"Content-Type": "application/json"})
    assert (got, body["code"]) == (400, 3) and f"more than {MAX_DEPTH} deep" in body["message"]
    just = {"a": json.loads("[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))}
    got, _, body = await call("POST", url, json=just)
    assert got == 400 and "deep" not in body["message"]  # refused as an unknown field instead
    broken = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    gzip_header = gzip.compress(b"")[:10]
    for data in (b"not gzip at all", gzip_header + b"\xff" * 64):
        got, _, body = await call("POST", url, data=data, headers=broken)
        assert got == 400 and body["code"] == 3, (data, body)
        assert body["details"][0]["fieldViolations"][0]["field"] == "Content-Encoding"
    gzipped = gzip.compress(json.dumps(PUBLISH).encode())
    assert (await call("POST", url, data=gzipped, headers=broken))[0] == 200
    big = {"documents": [{"docId": "d", "content": "x" * (1 << 20)}]}
    got, _, body = await call("POST", url, json=big)
    assert (got, body["code"]) == (413, 8) and "1048576" in body["message"]
    got, headers, body = await call("GET", url)
    assert (got, body["code"], headers["Allow"]) == (405, 12, "OPTIONS,POST")
    got, headers, _ = await call("OPTIONS", url)
    assert (got, headers["Allow"]) == (204, "POST, OPTIONS")
    assert writes.published == ["d"]
    assert [r.getMessage() for r in caplog.records if r.exc_info] == []  # no traceback


@given(st.text())
def test_any_text_is_one_event_a_conforming_client_reads_back(text: str) -> None:
    frame = sse.event(query_pb2.StreamQueryResponse(delta=text)).decode()
    [(name, data)] = events(frame)
    assert name == "delta" and json.loads(data) == {"delta": text}
    # Even a client that splits at every line end Python knows reads one data line.
    lines = frame.splitlines()
    assert lines == ["event: delta", f"data: {data}", ""]


@given(st.dictionaries(st.text(), st.text()), st.text(min_size=1))
def test_several_frames_decode_in_order(data: dict[str, str], tail: str) -> None:
    stream = (sse.event(query_pb2.StreamQueryResponse(delta=tail)).decode() * 2) + (
        f"event: x\ndata: {sse.data_line(data)}\n\n"
    )
    decoded = events(stream)
    assert [json.loads(d) for _, d in decoded] == [{"delta": tail}] * 2 + [data]
