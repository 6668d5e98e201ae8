"""`POST /v1/documents/upload`: a file, converted to text as `ragstream ingest` converts it
(`ragstream.common.formats`), then published exactly as PublishDocuments publishes it.

The body is multipart/form-data with one `file` part, whose file name chooses the converter
(by extension) and is the doc id and the cited path unless a `doc_id` field names the
document (to replace one already indexed); `workspace` and `version` fields are optional, as
in PublishDocuments (version 0: the server's clock). The call passes the PublishDocuments
route's gate: the token is checked before the body is read, then the request rules and the
workspace grant; it waits in the publishes admission queue, under the `grpc-timeout`
deadline, while the file is converted and published. A body over server.max_message_mb is
refused 413 RESOURCE_EXHAUSTED before conversion; a file no converter can read (damaged,
encrypted, binary, empty, a scan without text) is 400 INVALID_ARGUMENT naming the file and
the reason. The answer is PublishDocumentsResponse's JSON with `converted`: the format, the
title and the page count the converter found.

A form post is a request any page may send to any origin, so this route takes its body
type only with the `X-Ragstream-Upload` header (see `browser.py`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import hdrs, web
from aiohttp.web_protocol import RequestPayloadError
from aiohttp.web_request import FileField
from multidict import MultiDictProxy

from ragstream.common.formats import ConversionError, Converted, convert
from ragstream.query.transport.gate import Deadline, Gate
from ragstream.query.transport.http.codec import to_json
from ragstream.query.transport.http.routes import Handler, Route, deadline, options
from ragstream.query.transport.http.status import refusal
from ragstream.query.transport.rejections import Rejected, invalid
from ragstream.query.transport.validation import Violation
from ragstream.v1 import ingest_pb2

UPLOAD_PATH = "/v1/documents/upload"
UPLOAD_HEADER = "X-Ragstream-Upload"
PUBLISH_RPC = "/ragstream.v1.IngestService/PublishDocuments"
FIELDS = frozenset({"file", "workspace", "doc_id", "version"})
Form = MultiDictProxy[str | bytes | bytearray | FileField]


@dataclass(frozen=True, slots=True)
class Upload:
    """One uploaded file and the fields beside it."""

    workspace: str
    doc_id: str
    version: int
    filename: str
    field: FileField


def add_upload_route(app: web.Application, routes: Sequence[Route], gate: Gate) -> None:
    """Serves the upload route when the PublishDocuments route is served."""
    publish = next((route for route in routes if route.rpc == PUBLISH_RPC), None)
    if publish is None:
        return
    app.router.add_post(UPLOAD_PATH, uploader(publish, gate))
    app.router.add_route(hdrs.METH_OPTIONS, UPLOAD_PATH, options("POST, OPTIONS"))


def uploader(publish: Route, gate: Gate) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            grant = gate.authenticate(request.headers.items())  # before reading the body
            upload = parse_form(await read_form(request))
            named = publish_request(upload, "placeholder")
            gate.check(named, grant)  # the token's workspace and the doc id, before converting
            allowed = deadline(request.headers)
            context = Deadline.after(allowed)  # converting spends the caller's time too
            running = gate.running(publish.rpc, allowed, named)
            async with running:
                converted = await asyncio.to_thread(convert_upload, upload)
                message = publish_request(upload, converted.text, converted.metadata)
                gate.check(message, grant)
                reply = await publish.call(message, context)
            return web.json_response({**to_json(reply), "converted": summary(converted)})
        except Rejected as rejected:
            return refusal(rejected)

    return handle


async def read_form(request: web.Request) -> Form:
    """The form, each file part in a temporary file; aiohttp refuses a body over the
    port's limit with 413 while reading it."""
    try:
        return await request.post()
    except (ValueError, RequestPayloadError) as exc:
        reason = " ".join(str(exc).split())
        violation = Violation("body", f"is not readable multipart/form-data: {reason}")
        raise invalid([violation], "unreadable upload") from None


def parse_form(form: Form) -> Upload:
    unknown = [printable(key) for key in form if key not in FIELDS]
    violations = [Violation(key, "is not a field of an upload") for key in unknown]
    files = [part for part in form.getall("file", []) if isinstance(part, FileField)]
    if len(files) != 1 or len(form.getall("file", [])) != 1:
        violations.append(Violation("file", "must be exactly one file part"))
    elif not is_utf8(files[0].filename):
        violations.append(Violation("file", "must have a UTF-8 file name"))
    texts = {key: form.get(key, "") for key in ("workspace", "doc_id", "version")}
    violations += [
        Violation(key, "must be a UTF-8 text field")
        for key, value in texts.items()
        if not isinstance(value, str) or not is_utf8(value)
    ]
    version = str(texts["version"]).strip() or "0"
    if not re.fullmatch(r"\d{1,19}", version):
        violations.append(Violation("version", "must be a whole number, 0 or above"))
    if violations:
        raise invalid(violations, "invalid upload")
    filename = files[0].filename
    return Upload(
        workspace=str(texts["workspace"]),
        doc_id=str(texts["doc_id"]) or filename,
        version=int(version),
        filename=filename,
        field=files[0],
    )


def is_utf8(text: str) -> bool:
    """False for text holding bytes that did not decode (kept as lone surrogates)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def printable(name: str) -> str:
    """A field's name as a message can carry it: bytes that did not decode become U+FFFD."""
    return name.encode(errors="surrogatepass").decode(errors="replace")


def convert_upload(upload: Upload) -> Converted:
    """The file's text and metadata, as `ragstream ingest` gets them; INVALID_ARGUMENT
    naming the file when it cannot be indexed."""
    try:
        with upload.field.file as file:
            return convert(Path(upload.filename), file.read())
    except ConversionError as exc:
        violation = Violation("file", f"{upload.filename!r} cannot be indexed: {exc}")
        raise invalid([violation], "invalid upload") from None


def publish_request(
    upload: Upload, content: str, metadata: dict[str, str] | None = None
) -> ingest_pb2.PublishDocumentsRequest:
    document = ingest_pb2.DocumentInput(
        doc_id=upload.doc_id,
        content=content,
        file_path=upload.filename,
        version=upload.version,
        metadata=metadata or {},
    )
    return ingest_pb2.PublishDocumentsRequest(workspace=upload.workspace, documents=[document])


def summary(converted: Converted) -> dict[str, Any]:
    """What the converter found: the format, the title, the pages when the file has them."""
    found: dict[str, Any] = {key: converted.metadata[key] for key in ("format", "title")}
    if "pages" in converted.metadata:
        found["pages"] = int(converted.metadata["pages"])
    found["characters"] = len(converted.text)
    return found
