"""A server-streaming RPC as server-sent events (the `text/event-stream` format).

Each response message is one event: its `event:` is the name of the message's oneof case
(StreamQuery sends `context`, then `delta`s, then `end`), its `data:` the whole message in
protobuf's JSON mapping, on one line (`data_line`: no character any client may take for
a line's end appears raw in it). A refusal before the first message is an ordinary
error response (google.rpc.Status JSON, its HTTP code); once events have been sent, a failure
ends the stream with an `error` event whose data is the google.rpc.Status.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager
from typing import Any

from aiohttp import web
from google.protobuf.message import Message
from google.rpc import code_pb2

from ragstream.query.transport.http.codec import to_json
from ragstream.query.transport.rejections import Rejected

log = logging.getLogger(__name__)
HEADERS = {
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",  # proxies that buffer responses must pass events on at once
}

_SEPARATORS = {ord(c): f"\\u{ord(c):04x}" for c in "\u0085\u2028\u2029"}


def event(message: Message) -> bytes:
    oneofs = message.DESCRIPTOR.oneofs
    name = (message.WhichOneof(oneofs[0].name) if oneofs else None) or "message"
    return _frame(name, to_json(message))


def _frame(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {data_line(data)}\n\n".encode()


def data_line(data: dict[str, Any]) -> str:
    """`data` as JSON on one line whatever text it holds: JSON escapes CR and LF itself, and
    here also the characters other line splitters break at (U+0085 NEL, U+2028 LINE
    SEPARATOR, U+2029 PARAGRAPH SEPARATOR; JavaScript's and Python's splitlines do), so no
    client can cut an event's data short. Other text stays UTF-8, half the size of escapes
    for most scripts."""
    payload = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return payload.translate(_SEPARATORS)


async def stream(
    request: web.Request,
    running: AbstractAsyncContextManager[None],
    messages: AsyncGenerator[Message, None],
) -> web.StreamResponse:
    """Sends `messages` as events while `running` (admission and deadline) holds."""
    response = web.StreamResponse(headers=HEADERS)
    try:
        async with running, contextlib.aclosing(messages) as items:
            async for item in items:
                if not response.prepared:
                    await response.prepare(request)
                await response.write(event(item))
    except Rejected as rejected:
        if not response.prepared:
            raise
        await response.write(_frame("error", to_json(rejected.status(), defaults=False)))
    except Exception:  # the headers are sent: the stream itself must say it failed
        if not response.prepared:
            raise
        log.exception("%s failed after its first event", request.path)
        failed = {"code": code_pb2.UNKNOWN, "message": "the server failed; see its log"}
        await response.write(_frame("error", failed))
    if not response.prepared:
        await response.prepare(request)
    await response.write_eof()
    return response
