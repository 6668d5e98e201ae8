"""The upload route on a real aiohttp server with the real gate (a token granting one
workspace): files converted as `ragstream ingest` converts them and published through the
PublishDocuments servicer method; bad files 400 naming the file, a body over the limit 413,
and form posts a page on another site could send refused before anything is published."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from ragstream.common.formats import convert
from ragstream.query.transport.auth import Grant, TokenAuthenticator, token_digest
from ragstream.query.transport.gate import CallContext, Gate
from ragstream.query.transport.http.routes import build_routes
from ragstream.query.transport.http.server import HttpServer, build_app
from ragstream.query.transport.validation import Limits
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc
from tests.support.documents import corrupt_pdf_bytes, docx_bytes, pdf_bytes

TOKEN = "upload-token"
CORS = "https://app.example"
UPLOAD = {"X-Ragstream-Upload": "test", "authorization": f"Bearer {TOKEN}"}


class Publishes(ingest_pb2_grpc.IngestServiceServicer):
    def __init__(self) -> None:
        self.requests: list[ingest_pb2.PublishDocumentsRequest] = []

    async def PublishDocuments(self, request: Any, context: CallContext) -> Any:
        self.requests.append(request)
        results = [
            ingest_pb2.PublishResult(
                doc_id=d.doc_id, version=d.version, outcome=ingest_pb2.PUBLISH_OUTCOME_ACCEPTED
            )
            for d in request.documents
        ]
        return ingest_pb2.PublishDocumentsResponse(results=results)


@pytest.fixture
async def port() -> AsyncIterator[tuple[str, Publishes]]:
    publishes = Publishes()  # type: ignore[abstract]  # only publishing is exercised
    grants = {token_digest(TOKEN): Grant("uploader", frozenset({"mine"}))}
    gate = Gate(Limits(max_document_bytes=100_000), "mine", TokenAuthenticator(grants))
    app = build_app(build_routes({"IngestService": publishes}), gate, (CORS,), max_body_mb=1)
    server = HttpServer("127.0.0.1:0", app)
    await server.start()
    try:
        yield f"http://127.0.0.1:{server.port}", publishes
    finally:
        await server.stop()


def form(name: str, data: bytes, **fields: str) -> aiohttp.FormData:
    body = aiohttp.FormData()
    for key, value in fields.items():
        body.add_field(key, value)
    body.add_field("file", data, filename=name, content_type="application/octet-stream")
    return body


async def upload(url: str, body: Any, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{url}/v1/documents/upload", data=body, headers=headers) as reply,
    ):
        return reply.status, await reply.json()


async def test_files_are_converted_as_ingest_converts_them_and_published(
    port: tuple[str, Publishes],
) -> None:
    url, publishes = port
    pdf = pdf_bytes(["Mira Okafor leads the Tern team.", "Sonar trials."], "Tern report")
    status, reply = await upload(url, form("report.pdf", pdf, version="7"), UPLOAD)
    assert status == 200, reply
    assert reply["results"] == [
        {"docId": "report.pdf", "version": "7", "outcome": "PUBLISH_OUTCOME_ACCEPTED",
         "storedVersion": "0"}
    ]  # fmt: skip
    assert reply["converted"] == {"format": "pdf", "title": "Tern report", "pages": 2,
                                  "characters": len(convert_text("report.pdf", pdf))}  # fmt: skip
    docx = docx_bytes("Tern notes", ["Mira Okafor leads the Tern team."])
    status, reply = await upload(
        url, form("notes.docx", docx, doc_id="notes", workspace="mine"), UPLOAD
    )
    assert status == 200 and reply["converted"]["format"] == "docx"
    [first], [second] = (r.documents for r in publishes.requests)
    assert (first.doc_id, first.file_path, first.version) == ("report.pdf", "report.pdf", 7)
    assert first.content == convert_text("report.pdf", pdf)
    assert dict(first.metadata) == {"format": "pdf", "title": "Tern report", "pages": "2"}
    assert (second.doc_id, second.file_path) == ("notes", "notes.docx")
    assert second.content == convert_text("notes.docx", docx)
    assert [r.workspace for r in publishes.requests] == ["", "mine"]


def convert_text(name: str, data: bytes) -> str:
    return convert(Path(name), data).text


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("broken.pdf", corrupt_pdf_bytes(), "damaged PDF"),
        ("fake.docx", b"plain text", "not a DOCX file"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00", "binary file"),
        ("empty.md", b"   \n", "empty file"),
        ("latin1.txt", "café".encode("latin-1"), "not valid UTF-8"),
    ],
)
async def test_a_file_that_cannot_be_indexed_is_400_naming_it(
    port: tuple[str, Publishes], name: str, data: bytes, reason: str
) -> None:
    url, publishes = port
    status, reply = await upload(url, form(name, data), UPLOAD)
    assert (status, reply["code"]) == (400, 3)
    assert name in reply["message"] and reason in reply["message"]
    [violation] = reply["details"][0]["fieldViolations"]
    assert violation["field"] == "file" and name in violation["description"]
    assert publishes.requests == []


async def test_bad_forms_are_400_naming_the_field(port: tuple[str, Publishes]) -> None:
    url, publishes = port
    cases = [
        (form("a.txt", b"text", version="soon"), "version"),
        (form("a.txt", b"text", colour="red"), "colour"),
        (form("a.txt", b"text", doc_id="bad\u202eid"), "documents[0].doc_id"),
        (form("long.txt", b"word " * 30_000), "documents[0].content"),  # over the text limit
    ]
    no_file = aiohttp.FormData(default_to_multipart=True)
    no_file.add_field("workspace", "mine")
    no_file.add_field("doc_id", "x")
    cases.append((no_file, "file"))
    cases.append((form("a.txt", b"text"), "grpc-timeout"))
    for body, field in cases:
        timeout = {"grpc-timeout": "soon"} if field == "grpc-timeout" else {}
        status, reply = await upload(url, body, {**UPLOAD, **timeout})
        assert (status, reply["code"]) == (400, 3), reply
        assert reply["details"][0]["fieldViolations"][0]["field"] == field
    assert publishes.requests == []


PART = (
    b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n'
    b"hello\r\n--b--\r\n"
)


@pytest.mark.parametrize(
    ("content_type", "body", "said"),
    [
        ("multipart/form-data", PART, "boundary"),
        ("multipart/form-data; boundary=b", PART[:30], "multipart/form-data"),
        ("multipart/form-data; boundary=zz", PART, "boundary"),
        ("multipart/form-data; boundary=b", PART.replace(b'"file"', b'"\xff\xfe"'), "field"),
        ("multipart/form-data; boundary=b", PART.replace(b'"a.txt"', b'"\xff.txt"'), "UTF-8"),
        ("multipart/form-data; boundary=b", PART.replace(b'; filename="a.txt"', b""), "file"),
    ],
    ids=["no-boundary", "truncated", "other-boundary", "binary-name", "binary-filename", "text"],
)
async def test_a_broken_multipart_body_is_400_never_5xx(
    port: tuple[str, Publishes], content_type: str, body: bytes, said: str
) -> None:
    url, publishes = port
    status, reply = await upload(url, body, {**UPLOAD, "content-type": content_type})
    assert (status, reply["code"]) == (400, 3) and said in reply["message"], reply
    assert publishes.requests == []


async def test_a_body_over_the_limit_is_413_resource_exhausted(
    port: tuple[str, Publishes],
) -> None:
    url, publishes = port
    status, reply = await upload(url, form("big.txt", b"a" * (1024 * 1024 + 1)), UPLOAD)
    assert (status, reply["code"]) == (413, 8)
    assert publishes.requests == []


async def test_tokens_and_workspaces_are_checked_as_for_publish(
    port: tuple[str, Publishes],
) -> None:
    url, publishes = port
    status, reply = await upload(url, form("a.txt", b"text"), {"X-Ragstream-Upload": "1"})
    assert (status, reply["code"]) == (401, 16)
    status, reply = await upload(url, form("a.txt", b"text", workspace="theirs"), UPLOAD)
    assert (status, reply["code"]) == (403, 7) and "'theirs'" in reply["message"]
    assert publishes.requests == []


async def test_form_posts_another_site_could_send_are_refused(
    port: tuple[str, Publishes],
) -> None:
    url, publishes = port
    refused = [
        ({"authorization": f"Bearer {TOKEN}"}, 403, "X-Ragstream-Upload"),  # a plain form
        ({**UPLOAD, "Origin": "https://evil.example"}, 403, "Origin"),
        ({**UPLOAD, "Origin": CORS}, 403, "own console"),  # CORS origins read, never upload
    ]
    for headers, code, said in refused:
        status, reply = await upload(url, form("a.txt", b"text"), headers)
        assert status == code and said in reply["message"], reply
    async with aiohttp.ClientSession() as session:
        text = {**UPLOAD, "content-type": "text/plain"}
        async with session.post(f"{url}/v1/documents/upload", data=b"x", headers=text) as r:
            assert r.status == 415 and "multipart/form-data" in (await r.json())["message"]
        publish = f"{url}/v1/documents"
        async with session.post(publish, data=form("a.txt", b"t"), headers=UPLOAD) as r:
            assert r.status == 415  # every other route still takes JSON only
    assert publishes.requests == []
    status, _ = await upload(url, form("a.txt", b"text"), {**UPLOAD, "Origin": url})  # the console
    assert status == 200 and len(publishes.requests) == 1
