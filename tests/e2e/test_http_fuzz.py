"""Fuzzing the HTTP port of a real `ragstream serve`: hypothesis draws methods, paths (the
routes, the console's files, unknown paths), query strings, headers (types, encodings,
deadlines, tokens, origins, hosts) and bodies (request-shaped JSON with values of every
type, any JSON, any bytes, deep nesting, gzip, broken gzip), and sends them in batches.
No answer may be a 5xx, and the server's log may hold no traceback: every fault a client
can make is a 4xx saying what is wrong.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp
import pytest
from google.protobuf import message_factory
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from yarl import URL

from ragstream.query.transport.http.routes import ROUTES
from ragstream.v1 import graph_pb2, ingest_pb2, query_pb2
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
BATCH = 50
EXAMPLES = 102
"""BATCH requests per example: 5,100 requests in all."""
FILES = {"QueryService": query_pb2, "IngestService": ingest_pb2, "GraphService": graph_pb2}
CONSOLE = ("/", "/console/main.js", "/console/console.css", "/console/", "/console/../x")
Request = dict[str, Any]


def request_type(service: str, method: str) -> Any:
    rpc = FILES[service].DESCRIPTOR.services_by_name[service].methods_by_name[method]
    return message_factory.GetMessageClass(rpc.input_type).DESCRIPTOR


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)
DIGITS = st.from_regex(r"\A-?\d{1,22}\Z")


def field_value(field: Any, depth: int) -> st.SearchStrategy[Any]:
    """A value for `field`: usually of its type, sometimes of any other."""
    if field.message_type is not None and depth < 3:
        typed: st.SearchStrategy[Any] = message_json(field.message_type, depth + 1)
        if field.message_type.GetOptions().map_entry:
            typed = st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=3)
    elif field.enum_type is not None:
        typed = st.sampled_from([v.name for v in field.enum_type.values]) | st.integers(-2, 9)
    elif field.type == field.TYPE_STRING:
        typed = st.text(max_size=40) | st.sampled_from(["default", "demo", ""])
    elif field.type == field.TYPE_BOOL:
        typed = st.booleans()
    else:
        typed = st.integers(-(2**65), 2**65) | st.floats() | DIGITS
    if field.is_repeated and not (field.message_type and field.message_type.GetOptions().map_entry):
        typed = st.lists(typed, max_size=3)
    return st.one_of(typed, typed, typed, ANY_JSON)


def message_json(descriptor: Any, depth: int = 0) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object naming some of the message's fields (in either spelling)."""
    fields = {}
    for field in descriptor.fields:
        fields[field.json_name] = field_value(field, depth)
    return st.fixed_dictionaries({}, optional=fields)


def deep(levels: int) -> bytes:
    return b'{"a":' + b"[" * levels + b"]" * levels + b"}"


SHAPED = {path: message_json(request_type(service, rpc)) for path, service, rpc in ROUTES}
"""Each route's request-shaped JSON. Every strategy here is built once, at import: building
one per draw costs more than drawing from it."""
VERBS = st.sampled_from(["POST"] * 6 + ["GET"] * 3 + ["PUT", "DELETE", "HEAD", "OPTIONS"])
ELSEWHERE = st.sampled_from(["/v1/", "/v1/nothing", *CONSOLE]) | st.text(max_size=12).map(
    lambda t: "/v1/" + quote(t)
)
BODIES = {
    path: st.one_of(
        shaped.map(lambda d: json.dumps(d).encode()),
        ANY_JSON.map(lambda d: json.dumps(d).encode()),
        st.binary(max_size=200),
        st.integers(1, 3000).map(deep),
        st.just(b""),
    )
    for path, shaped in SHAPED.items()
}
QUERIES: dict[str, st.SearchStrategy[Any]] = {
    path: st.just({}) | shaped | ANY_JSON for path, shaped in SHAPED.items()
}
TYPES = (
    *("application/json", "application/json; charset=utf-8", "text/plain", "", "a/b"),
    *("application/x-www-form-urlencoded", "multipart/form-data; boundary=x"),
)
HOSTILE = st.fixed_dictionaries(
    {},
    optional={
        "Content-Type": st.sampled_from(TYPES),
        "Content-Encoding": st.sampled_from(["gzip", "deflate", "br", "zstd", "identity", "x"]),
        "grpc-timeout": st.sampled_from(["60S", "2M", "soon", "1", "99999999999S", "-1S"]),
        "authorization": st.sampled_from(["Bearer x", "Basic abc", "Bearer", ""]),
        "Origin": st.sampled_from(["null", "http://other.example", "file://", "http://[x"]),
        "Host": st.sampled_from(["attacker.example", "localhost", "[::1]:1", "a b", "::::"]),
        "traceparent": st.sampled_from(["00-bad", "00-" + "0" * 32 + "-" + "0" * 16 + "-01"]),
    },
)


PLAUSIBLE = st.fixed_dictionaries(
    {"Content-Type": st.just("application/json")},
    optional={"grpc-timeout": st.just("60S"), "Content-Encoding": st.just("gzip")},
)
HEADERS = st.one_of(PLAUSIBLE, PLAUSIBLE, HOSTILE)
"""Mostly headers the port accepts, so that bodies reach the gate and the servicers."""


@st.composite
def requests(draw: st.DrawFn) -> Request:
    path = draw(st.sampled_from(ROUTES))[0]
    verb = draw(VERBS)
    where = path if draw(st.integers(0, 3)) else draw(ELSEWHERE)
    body = draw(BODIES[path])
    headers = draw(HEADERS)
    if headers.get("Content-Encoding") == "gzip" and draw(st.booleans()):
        body = gzip.compress(body)  # a body really in gzip; otherwise the encoding is a lie
    query = draw(QUERIES[path]) if verb == "GET" else {}
    pairs = query.items() if isinstance(query, dict) else [("q", query)]
    query_string = urlencode(
        {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in pairs}
    )
    return {"method": verb, "path": where, "query": query_string, "headers": headers, "body": body}


async def send(session: aiohttp.ClientSession, base: str, request: Request) -> tuple[int, str]:
    """(status, start of the body); status 0 when the client could not read the answer."""
    url = base + request["path"] + ("?" + request["query"] if request["query"] else "")
    try:
        async with session.request(
            request["method"],
            URL(url, encoded=True),
            data=request["body"] or None,
            headers=request["headers"],
            skip_auto_headers=["Content-Type"],
            allow_redirects=False,
        ) as reply:
            return reply.status, (await reply.read())[:300].decode("utf-8", "replace")
    except aiohttp.ClientError as error:
        return 0, repr(error)


def unreadable_body(request: Request) -> bool:
    """Whether the body is not in the Content-Encoding the request names, or the server
    cannot decode it (br and zstd need packages it does not install). aiohttp's server may
    then answer twice on the connection (the route's answer, then its own 400 when the body
    fails to decode; or a 400 with a body to a HEAD), which a client cannot read. Neither
    is a 5xx; no other request may go without a readable answer."""
    encoding = request["headers"].get("Content-Encoding")
    if encoding in (None, "identity"):
        return False
    try:
        return encoding != "gzip" or not gzip.decompress(request["body"])
    except (OSError, EOFError):
        return True


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path_factory.mktemp("fuzz") / "data", http=True) as process:
        yield process


def test_no_request_gets_a_5xx_or_leaves_a_traceback(server: ServeProcess) -> None:
    assert server.http_address is not None
    base = f"http://{server.http_address}"
    loop = asyncio.new_event_loop()
    sent: list[int] = []

    async def batch(drawn: list[Request]) -> list[tuple[int, str]]:
        connector = aiohttp.TCPConnector(force_close=True, limit=8)
        async with aiohttp.ClientSession(connector=connector) as session:
            return await asyncio.gather(*(send(session, base, r) for r in drawn))

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.generate],  # a server keeps state: shrinking would chase ghosts
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.lists(requests(), min_size=BATCH, max_size=BATCH))
    def no_5xx(drawn: list[Request]) -> None:
        answers = loop.run_until_complete(batch(drawn))
        sent.extend(status for status, _ in answers)
        pairs = list(zip(drawn, answers, strict=True))
        failed = [(r, a) for r, a in pairs if a[0] >= 500 or (a[0] == 0 and not unreadable_body(r))]
        assert failed == [], failed[:3]

    try:
        no_5xx()
    finally:
        loop.close()
    assert len(sent) >= 5000 and not server.exited()
    assert {s // 100 for s in sent} >= {2, 4}, sorted(set(sent))
    assert "Traceback" not in server.log(), server.log()[-3000:]
