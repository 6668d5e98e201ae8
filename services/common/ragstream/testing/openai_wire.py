"""The OpenAI HTTP API's JSON shapes, as `openai_server` writes them.

Pure functions and records, kept apart from the server so the wire format reads in one place.
"""

from __future__ import annotations

import base64
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from ragstream.common.providers.embedding import Matrix

Body = dict[str, Any]

_TOKEN = re.compile(r"\s*\S+")


def token_count(text: str) -> int:
    """len(split_tokens(text)) without building the pieces: a prompt's usage is counted on
    every call, and splitting a 70,000-character prompt took the server 1.5 ms."""
    return len(text.split()) or (1 if text else 0)


def split_tokens(text: str) -> list[str]:
    """Word-sized pieces that concatenate back to the text; the server's notion of a token."""
    pieces = _TOKEN.findall(text)
    tail = text[sum(len(piece) for piece in pieces) :]
    return [*pieces[:-1], pieces[-1] + tail] if pieces else ([tail] if tail else [])


@dataclass(frozen=True)
class ChatReply:
    """One assistant answer, written either as a completion or as stream chunks."""

    id: str
    model: str
    tokens: list[str]
    finish_reason: str
    prompt_tokens: int
    created: int = field(default_factory=lambda: int(time.time()))

    def usage(self) -> Body:
        total = self.prompt_tokens + len(self.tokens)
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": len(self.tokens),
            "total_tokens": total,
        }

    def completion(self) -> Body:
        message = {"role": "assistant", "content": "".join(self.tokens)}
        choice = {"index": 0, "message": message, "finish_reason": self.finish_reason}
        return {**self._envelope("chat.completion"), "choices": [choice], "usage": self.usage()}

    def chunks(self, include_usage: bool) -> list[Body]:
        """A role chunk, one chunk per token, a finish chunk, and the usage chunk if asked for."""
        deltas: list[tuple[Body, str | None]] = [({"role": "assistant", "content": ""}, None)]
        deltas += [({"content": token}, None) for token in self.tokens]
        deltas.append(({}, self.finish_reason))
        events = [
            {
                **self._envelope("chat.completion.chunk"),
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            for delta, finish in deltas
        ]
        if include_usage:
            events.append(
                {**self._envelope("chat.completion.chunk"), "choices": [], "usage": self.usage()}
            )
        return events

    def _envelope(self, kind: str) -> Body:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}


def include_usage(body: Body) -> bool:
    options = body.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def encode_embedding(row: Matrix, as_base64: bool) -> str | list[float]:
    """base64 is the little-endian float32 bytes, as OpenAI sends them."""
    return base64.b64encode(row.tobytes()).decode() if as_base64 else row.tolist()


def embedding_inputs(value: object) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        return list(value)
    return None


def error_response(
    status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    error = {"message": message, "type": kind, "param": None, "code": None}
    return web.json_response({"error": error}, status=status, headers=headers)
