"""The HTTP/JSON port on a real aiohttp server with the real gate, over servicers that
record their calls: refusals as google.rpc.Status JSON with the matching HTTP code, the
gate's checks, admission and deadline, server-sent events, CORS, and the console's files."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from ragstream.query.transport.admission import Admission
from ragstream.query.transport.auth import Grant, TokenAuthenticator, token_digest
from ragstream.query.transport.gate import QUERIES, CallContext, Gate
from ragstream.query.transport.http.routes import build_routes
from ragstream.query.transport.http.server import HttpServer, build_app
from ragstream.query.transport.rejections import not_found
from ragstream.query.transport.validation import Limits
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc

TOKEN = "s3cret"


class Queries(query_pb2_grpc.QueryServiceServicer):
    """Retrieve answers with the time left; "slow" sleeps; StreamQuery fails on "break"."""

    def __init__(self) -> None:
        self.calls = 0

    async def Retrieve(self, request: Any, context: CallContext) -> query_pb2.RetrieveResponse:
        self.calls += 1
        if request.query == "slow":
            await asyncio.sleep(0.5)
        if request.query == "missing":
            raise not_found("nothing of that name")
        left = context.time_remaining()
        return query_pb2.RetrieveResponse(notes=["none" if left is None else f"{left:.3f}"])

    async def StreamQuery(self, request: Any, context: CallContext) -> AsyncIterator[Any]:
        yield query_pb2.StreamQueryResponse(delta="one ")
        if request.query == "break":
            raise RuntimeError("the model went away")
        yield query_pb2.StreamQueryResponse(delta="two")
        yield query_pb2.StreamQueryResponse(end=query_pb2.StreamQueryEnd())


class Progress(ingest_pb2_grpc.IngestServiceServicer):
    async def GetIndexingProgress(self, request: Any, context: CallContext) -> Any:
        return ingest_pb2.GetIndexingProgressResponse(pending_graph_merges=3)


async def serve(gate: Gate, queries: Queries, cors: tuple[str, ...] = ()) -> HttpServer:
    ingest = Progress()  # type: ignore[abstract]  # only the progress read is exercised
    routes = build_routes({"QueryService": queries, "IngestService": ingest})
    server = HttpServer("127.0.0.1:0", build_app(routes, gate, cors))
    await server.start()
    return server


@pytest.fixture
async def client() -> AsyncIterator[tuple[aiohttp.ClientSession, str, Queries]]:
    grants = {token_digest(TOKEN): Grant("tester", frozenset({"mine"}))}
    admissions = {QUERIES: Admission(QUERIES, 1, 0)}
    gate = Gate(Limits(max_document_bytes=100), "mine", TokenAuthenticator(grants), admissions)
    queries = Queries()  # type: ignore[abstract]  # Query is not exercised
    server = await serve(gate, queries)
    try:
        async with aiohttp.ClientSession(headers={"authorization": f"Bearer {TOKEN}"}) as s:
            yield s, f"http://127.0.0.1:{server.port}", queries
    finally:
        await server.stop()


async def post(session: aiohttp.ClientSession, url: str, body: Any, **kw: Any) -> Any:
    async with session.post(url, json=body, **kw) as reply:
        return reply.status, dict(reply.headers), await reply.json()


async def test_tokens_and_workspaces_are_checked_as_over_grpc(
    client: tuple[aiohttp.ClientSession, str, Queries],
) -> None:
    session, base, queries = client
    url = f"{base}/v1/retrieve"
    status, _, body = await post(session, url, {"query": "q", "workspace": "mine"})
    assert status == 200 and body["notes"] == ["none"]
    status, headers, body = await post(session, url, {"query": "q"}, headers={"authorization": ""})
    assert (status, body["code"]) == (401, 16) and headers["WWW-Authenticate"].startswith("Bearer")
    status, _, body = await post(session, url, {"query": "q", "workspace": "theirs"})
    assert (status, body["code"]) == (403, 7) and "'theirs'" in body["message"]
    assert queries.calls == 1


async def test_a_bad_body_or_field_is_400_naming_the_field(
    client: tuple[aiohttp.ClientSession, str, Queries],
) -> None:
    session, base, queries = client
    for body, field in (
        ({"query": "q", "params": {"topK": "many"}}, "params.top_k"),
        ({"query": "q", "params": {"topK": 5000}}, "params.top_k"),
        ({"query": ""}, "query"),
        ({"query": "q", "colour": "red"}, "colour"),
    ):
        status, _, reply = await post(session, f"{base}/v1/retrieve", body)
        [detail] = reply["details"]
        assert status == 400 and reply["code"] == 3
        assert detail["@type"] == "type.googleapis.com/google.rpc.BadRequest"
        assert detail["fieldViolations"][0]["field"] == field
    json_type = {"content-type": "application/json"}
    async with session.post(f"{base}/v1/retrieve", data=b"{not json", headers=json_type) as raw:
        assert raw.status == 400
    assert queries.calls == 0


async def test_admission_and_deadline_apply_to_http_calls(
    client: tuple[aiohttp.ClientSession, str, Queries],
) -> None:
    session, base, _ = client
    url = f"{base}/v1/retrieve"
    status, _, body = await post(session, url, {"query": "q"}, headers={"grpc-timeout": "5S"})
    assert status == 200 and 4.0 < float(body["notes"][0]) <= 5.0
    # An idle family runs a call whose deadline is too short for it, which then times out.
    timed = await post(session, url, {"query": "slow"}, headers={"grpc-timeout": "100m"})
    assert (timed[0], timed[2]["code"]) == (504, 4)
    slow = asyncio.ensure_future(post(session, url, {"query": "slow"}))
    await asyncio.sleep(0.1)
    status, headers, body = await post(session, url, {"query": "q"})
    assert (status, body["code"]) == (429, 8) and int(headers["Retry-After"]) >= 1
    assert body["details"][0]["@type"] == "type.googleapis.com/google.rpc.RetryInfo"
    assert (await slow)[0] == 200
    bad = await post(session, url, {"query": "q"}, headers={"grpc-timeout": "soon"})
    assert bad[0] == 400 and bad[2]["details"][0]["fieldViolations"][0]["field"] == "grpc-timeout"
    missing = await post(session, url, {"query": "missing"})
    assert (missing[0], missing[2]["code"]) == (404, 5)


async def test_stream_query_is_server_sent_events(
    client: tuple[aiohttp.ClientSession, str, Queries],
) -> None:
    session, base, _ = client
    async with session.post(f"{base}/v1/query/stream", json={"query": "q"}) as reply:
        assert reply.headers["Content-Type"].startswith("text/event-stream")
        text = await reply.text()
    assert text == (
        'event: delta\ndata: {"delta":"one "}\n\n'
        'event: delta\ndata: {"delta":"two"}\n\n'
        'event: end\ndata: {"end":{"timings":[],"references":[]}}\n\n'
    )
    async with session.post(f"{base}/v1/query/stream", json={"query": "break"}) as reply:
        frames = (await reply.text()).strip().split("\n\n")
    assert frames[0].startswith("event: delta") and frames[-1].startswith("event: error")
    assert '"code":2' in frames[-1]
    refused = await post(session, f"{base}/v1/query/stream", {"query": ""})
    assert refused[0] == 400  # refused before the first event: a plain error response


async def test_cors_is_off_unless_origins_are_configured() -> None:
    gate = Gate(Limits(max_document_bytes=100), "default")
    origin = {"Origin": "https://app.example"}
    preflight = {**origin, "Access-Control-Request-Method": "POST"}
    for cors, allowed in (((), False), (("https://app.example",), True)):
        server = await serve(gate, Queries(), cors)  # type: ignore[abstract]
        base = f"http://127.0.0.1:{server.port}"
        try:
            async with aiohttp.ClientSession() as session:
                async with session.options(f"{base}/v1/retrieve", headers=preflight) as reply:
                    assert (reply.status == 204) is allowed
                async with session.post(
                    f"{base}/v1/query/stream", json={"query": "q"}, headers=origin
                ) as reply:
                    got = reply.headers.get("Access-Control-Allow-Origin")
                    assert got == ("https://app.example" if allowed else None)
        finally:
            await server.stop()


async def test_the_console_and_unknown_routes(
    client: tuple[aiohttp.ClientSession, str, Queries],
) -> None:
    session, base, _ = client
    async with session.get(f"{base}/") as page:
        assert page.content_type == "text/html" and "graph-view" in await page.text()
    for script in ("main.js", "api.js", "graph.js", "explorer.js", "vendor/graph-libs.js"):
        async with session.get(f"{base}/console/{script}") as reply:
            assert reply.status == 200 and "javascript" in reply.content_type
    async with session.get(f"{base}/v1/nothing") as missing:
        assert missing.status == 404 and (await missing.json())["code"] == 5
    async with session.get(f"{base}/v1/indexing-progress?workspace=mine") as progress:
        assert (await progress.json())["pendingGraphMerges"] == "3"  # int64 as a string
    async with session.get(f"{base}/v1/indexing-progress?workspace=mine&colour=red") as unknown:
        body = await unknown.json()
        violation = body["details"][0]["fieldViolations"][0]
        assert unknown.status == 400 and violation["field"] == "colour"
    async with session.get(f"{base}/v1/retrieve") as not_a_read:
        assert not_a_read.status == 405 and (await not_a_read.json())["code"] == 12
