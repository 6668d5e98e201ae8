"""An OpenAI-compatible HTTP server for tests and benchmarks.

It speaks the real wire format of /v1/chat/completions (plain and SSE streaming),
/v1/embeddings (float and base64) and /v1/models, so the real `openai` client, with its
timeouts, retries and parsing, runs against it. Behaviour is scripted (replies, embeddings,
latency, injected failures) and every request is logged, including requests whose client went
away before the answer was complete.

    async with OpenAITestServer() as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test")

Run standalone for manual checks and benchmarks:

    python -m ragstream.testing.openai_server --port 8089 --embed-latency-ms 100

With `--port 0` it binds a free port; the first line it prints names the base URL.
`GET /_test/log` returns the chat request bodies and embedding batch sizes it has seen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import itertools
import json
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

import numpy as np
from aiohttp import web

from ragstream.common.providers.embedding import Matrix, hash_embed
from ragstream.common.text.analyzer import load_segmenter
from ragstream.testing.local_server import LocalServer
from ragstream.testing.openai_wire import (
    Body,
    ChatReply,
    embedding_inputs,
    encode_embedding,
    error_response,
    include_usage,
    split_tokens,
    token_count,
)

Endpoint = Literal["chat", "embeddings", "models"]
ChatResponder = Callable[[list[Body], Body], str]
"""(messages, whole request body) -> the assistant's reply."""
EmbedFunction = Callable[[Sequence[str], int], Matrix]
"""(texts, dimensions) -> one row per text."""

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

LOG_PATH = "/_test/log"
"""Not part of the OpenAI API: what the server saw (`OpenAITestServer._log`)."""

CHAT_MODEL = "test-chat"
EMBEDDING_MODEL = "test-embedding"


def echo_responder(messages: list[Body], body: Body) -> str:
    """The default reply: "echo:" and the first 16 words of the last user message."""
    last = next((m for m in reversed(messages) if m.get("role") == "user"), {"content": ""})
    content = last.get("content")
    words = content.split() if isinstance(content, str) else []
    return " ".join(["echo:", *words[:16]])


@dataclass
class RequestLog:
    """What the server saw, per endpoint. Tests read it directly or await `wait_for`."""

    received: Counter[str] = field(default_factory=Counter)
    """Requests that arrived (injected failures included)."""
    failed: Counter[str] = field(default_factory=Counter)
    """Requests answered with an injected error status."""
    completed: Counter[str] = field(default_factory=Counter)
    """Requests whose full answer was written."""
    cancelled: Counter[str] = field(default_factory=Counter)
    """Requests whose client disconnected before the answer was complete."""
    bodies: dict[str, list[Body]] = field(default_factory=dict)
    embedding_batch_sizes: list[int] = field(default_factory=list)
    in_flight: Counter[str] = field(default_factory=Counter)
    """Requests being handled right now."""
    peak_in_flight: Counter[str] = field(default_factory=Counter)
    """The most requests handled at once, for checking client-side concurrency limits."""
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition, repr=False)

    async def wait_for(self, predicate: Callable[[RequestLog], bool]) -> None:
        """Waits until predicate(log) holds; bound it with `asyncio.timeout`."""
        async with self._changed:
            await self._changed.wait_for(lambda: predicate(self))

    async def _note(self, counter: Counter[str], endpoint: Endpoint) -> None:
        counter[endpoint] += 1
        async with self._changed:
            self._changed.notify_all()


@dataclass
class _Failure:
    remaining: int
    status: int
    retry_after_ms: float | None


class OpenAITestServer(LocalServer):
    """Binds 127.0.0.1 on a free port (or the given one); `base_url` ends in /v1."""

    handler_cancellation = True
    """A client that disconnects cancels its handler, which is how an abandoned request
    becomes visible (as CancelledError) in the log."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        responder: ChatResponder = echo_responder,
        embed: EmbedFunction = hash_embed,
        dimensions: int = 384,
    ) -> None:
        super().__init__(host=host, port=port)
        self.log = RequestLog()
        self._responder = responder
        self._replies: deque[str] = deque()
        self._embed = embed
        self._dimensions = dimensions
        self._latency_s: dict[Endpoint, float] = {"chat": 0.0, "embeddings": 0.0, "models": 0.0}
        self._token_delay_s = 0.0
        self._failures: dict[Endpoint, _Failure] = {}
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # Behaviour setters: each takes effect from the next request on.

    def set_responder(self, responder: ChatResponder) -> None:
        self._responder = responder

    def script_replies(self, *replies: str) -> None:
        """These replies are given first, in order; then the responder answers again."""
        self._replies.extend(replies)

    def set_embed(self, embed: EmbedFunction, dimensions: int | None = None) -> None:
        self._embed = embed
        if dimensions is not None:
            self._dimensions = dimensions

    def set_dimensions(self, dimensions: int) -> None:
        self._dimensions = dimensions

    def set_latency(self, endpoint: Endpoint, seconds: float) -> None:
        """Delay before the answer (before the first chunk of a stream)."""
        self._latency_s[endpoint] = seconds

    def set_token_delay(self, seconds: float) -> None:
        """Delay between the chunks of a streamed chat answer."""
        self._token_delay_s = seconds

    def fail_next(
        self,
        endpoint: Endpoint,
        count: int = 1,
        *,
        status: int = 503,
        retry_after_ms: float | None = None,
    ) -> None:
        """The next `count` requests to `endpoint` get `status` and an OpenAI error body.
        `retry_after_ms` sets the retry-after-ms header (honoured by the openai client and by
        ragstream's JsonEndpoint)."""
        self._failures[endpoint] = _Failure(count, status, retry_after_ms)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._watched("chat", self._chat))
        app.router.add_post("/v1/embeddings", self._watched("embeddings", self._embeddings))
        app.router.add_get("/v1/models", self._watched("models", self._models))
        app.router.add_get(LOG_PATH, self._log)

    # Handlers.

    def _watched(self, endpoint: Endpoint, handler: _Handler) -> _Handler:
        log = self.log

        async def watched(request: web.Request) -> web.StreamResponse:
            log.in_flight[endpoint] += 1
            log.peak_in_flight[endpoint] = max(
                log.peak_in_flight[endpoint], log.in_flight[endpoint]
            )
            try:
                return await handler(request)
            except asyncio.CancelledError:
                await log._note(log.cancelled, endpoint)
                raise
            finally:
                log.in_flight[endpoint] -= 1

        return watched

    async def _begin(self, endpoint: Endpoint, request: web.Request) -> Body | web.Response:
        """Logs the request; returns its body, or the error response to send instead."""
        await self.log._note(self.log.received, endpoint)
        body = await _json_object(request) if request.method == "POST" else {}
        if body is None:
            return error_response(400, "invalid_request_error", "the body must be a JSON object")
        self.log.bodies.setdefault(endpoint, []).append(body)
        failure = self._failures.get(endpoint)
        if failure is not None and failure.remaining > 0:
            failure.remaining -= 1
            await self.log._note(self.log.failed, endpoint)
            headers = {}
            if failure.retry_after_ms is not None:
                headers["retry-after-ms"] = str(failure.retry_after_ms)
            return error_response(failure.status, "server_error", "injected failure", headers)
        await asyncio.sleep(self._latency_s[endpoint])
        return body

    async def _log(self, request: web.Request) -> web.Response:
        """The chat request bodies and embedding batch sizes so far, for a client in another
        process (a benchmark that keeps the server off its own interpreter)."""
        return web.json_response(
            {
                "chat": self.log.bodies.get("chat", []),
                "embedding_batch_sizes": self.log.embedding_batch_sizes,
            }
        )

    async def _models(self, request: web.Request) -> web.Response:
        begun = await self._begin("models", request)
        if isinstance(begun, web.Response):
            return begun
        models = [CHAT_MODEL, EMBEDDING_MODEL]
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "ragstream"} for m in models]
        await self.log._note(self.log.completed, "models")
        return web.json_response({"object": "list", "data": data})

    async def _embeddings(self, request: web.Request) -> web.Response:
        begun = await self._begin("embeddings", request)
        if isinstance(begun, web.Response):
            return begun
        texts = embedding_inputs(begun.get("input"))
        if texts is None:
            return error_response(400, "invalid_request_error", "input must be a string or strings")
        self.log.embedding_batch_sizes.append(len(texts))
        dimensions = int(begun.get("dimensions") or self._dimensions)
        matrix = np.asarray(self._embed(texts, dimensions), dtype="<f4")
        as_base64 = begun.get("encoding_format") == "base64"
        data = [
            {"object": "embedding", "index": index, "embedding": encode_embedding(row, as_base64)}
            for index, row in enumerate(matrix)
        ]
        tokens = sum(token_count(text) for text in texts)
        await self.log._note(self.log.completed, "embeddings")
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": begun.get("model", EMBEDDING_MODEL),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        begun = await self._begin("chat", request)
        if isinstance(begun, web.Response):
            return begun
        if begun.get("stream"):
            return await self._chat_stream(request, begun)
        reply = self._reply(begun)
        await self.log._note(self.log.completed, "chat")
        return web.json_response(reply.completion())

    async def _chat_stream(self, request: web.Request, body: Body) -> web.StreamResponse:
        reply = self._reply(body)
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        try:
            for index, event in enumerate(reply.chunks(include_usage(body))):
                if index > 1 and self._token_delay_s > 0:
                    await asyncio.sleep(self._token_delay_s)
                await response.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        except ConnectionResetError:
            # The client closed and our write noticed before the handler was cancelled.
            await self.log._note(self.log.cancelled, "chat")
            return response
        await self.log._note(self.log.completed, "chat")
        return response

    def _reply(self, body: Body) -> ChatReply:
        messages = body.get("messages") or []
        text = self._replies.popleft() if self._replies else self._responder(messages, body)
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        tokens = split_tokens(text)
        truncated = isinstance(limit, int) and len(tokens) > limit
        prompt_tokens = sum(
            token_count(m["content"]) for m in messages if isinstance(m.get("content"), str)
        )
        return ChatReply(
            id=f"chatcmpl-{next(self._ids)}",
            model=str(body.get("model", CHAT_MODEL)),
            tokens=tokens[:limit] if truncated else tokens,
            finish_reason="length" if truncated else "stop",
            prompt_tokens=prompt_tokens,
        )


async def _json_object(request: web.Request) -> Body | None:
    try:
        body = await request.json()
    except json.JSONDecodeError:
        return None
    return body if isinstance(body, dict) else None


def _import_responder(parser: argparse.ArgumentParser, spec: str) -> ChatResponder:
    module_name, _, name = spec.partition(":")
    try:
        responder = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError, ValueError) as error:
        parser.error(f"--responder {spec}: {error} (expected MODULE:NAME)")
    if not callable(responder):
        parser.error(f"--responder {spec}: not a function")
    return cast(ChatResponder, responder)


async def _serve(args: argparse.Namespace) -> None:
    server = OpenAITestServer(
        host=args.host,
        port=args.port,
        dimensions=args.dimensions,
        responder=args.responder or echo_responder,
    )
    server.set_latency("embeddings", args.embed_latency_ms / 1000)
    server.set_latency("chat", args.chat_latency_ms / 1000)
    server.set_token_delay(args.chat_token_delay_ms / 1000)
    # The embeddings analyze their texts: the dictionary for Chinese is loaded before the
    # first request, not inside it (a second that no real endpoint would add).
    load_segmenter()
    async with server:
        print(f"serving the OpenAI API at {server.base_url}", flush=True)
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="OpenAI-compatible test server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--dimensions", type=int, default=384)
    parser.add_argument("--embed-latency-ms", type=float, default=0.0)
    parser.add_argument("--chat-latency-ms", type=float, default=0.0)
    parser.add_argument("--chat-token-delay-ms", type=float, default=0.0)
    parser.add_argument(
        "--responder",
        default=None,
        metavar="MODULE:NAME",
        help="the chat responder, a (messages, body) -> reply function (default: echo)",
    )
    args = parser.parse_args(argv)
    if args.responder is not None:
        args.responder = _import_responder(parser, args.responder)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
