"""The OpenAI chat-completions wire format <-> ragstream's query messages (pure functions).

A chat request becomes one query: the model name picks the mode (`ragstream-mix`,
`ragstream-local`, ..., or `ragstream` for the server's default), the last message, which
must be the user's, is the question, the earlier user and assistant messages are the
conversation history and the system messages the extra instructions (`user_prompt`).
Sampling fields (temperature, max_tokens, ...) are accepted and ignored: the server's
configured model answers. The reply's references close its content as a "References"
section, and come again in a non-standard `references` field for clients that read it.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from ragstream.v1 import query_pb2

PREFIX = "ragstream"
MODE_PREFIX = "QUERY_MODE_"
OWNER = "ragstream"
ROLES = frozenset({"system", "user", "assistant"})


def models() -> dict[str, str]:
    """Model name -> QueryMode name: `ragstream` (the server's default mode) and one per
    mode the API defines, so a mode added to the proto is served without a change here."""
    names = {}
    for value in query_pb2.QueryMode.DESCRIPTOR.values:
        suffix = value.name.removeprefix(MODE_PREFIX).lower()
        model = PREFIX if value.number == query_pb2.QUERY_MODE_UNSPECIFIED else f"{PREFIX}-{suffix}"
        names[model] = value.name
    return names


class ChatError(Exception):
    """A chat request the API refuses: `param` names the field at fault."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(f"{param} {message}")
        self.param = param
        self.message = f"{param} {message}"


@dataclass(frozen=True, slots=True)
class ChatRequest:
    model: str
    mode: str
    """The QueryMode's name."""
    question: str
    history: list[query_pb2.ChatMessage]
    instructions: str
    stream: bool

    def params(self) -> query_pb2.QueryParams:
        return query_pb2.QueryParams(
            mode=self.mode, conversation_history=self.history, user_prompt=self.instructions
        )


def parse_chat(raw: bytes) -> ChatRequest:
    """The chat request a body describes; ChatError names the first field at fault."""
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise ChatError("(body)", "must be a JSON object (application/json, UTF-8)") from None
    if not isinstance(body, dict):
        raise ChatError("(body)", "must be a JSON object")
    model = body.get("model")
    known = models()
    if not isinstance(model, str) or model not in known:
        raise ChatError("model", f"must be one of {', '.join(known)}")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ChatError("stream", "must be true or false")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ChatError("messages", "must be a non-empty JSON array")
    said = [_message(item, f"messages[{i}]") for i, item in enumerate(messages)]
    role, question = said[-1]
    if role != "user" or not question.strip():
        raise ChatError(f"messages[{len(said) - 1}]", "must be the user's question (not blank)")
    history = [query_pb2.ChatMessage(role=r, content=c) for r, c in said[:-1] if r != "system"]
    instructions = "\n\n".join(c for r, c in said if r == "system")
    return ChatRequest(model, known[model], question, history, instructions, stream)


def _message(item: object, where: str) -> tuple[str, str]:
    if not isinstance(item, dict):
        raise ChatError(where, "must be a JSON object")
    role = item.get("role")
    if role not in ROLES:
        raise ChatError(f"{where}.role", f"must be one of {', '.join(sorted(ROLES))}")
    return str(role), _text(item.get("content"), f"{where}.content")


def _text(content: object, where: str) -> str:
    """A message's content: a string, or an array of parts of which only text is read."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ChatError(where, "must be a string or an array of text parts")
    texts = []
    for index, part in enumerate(content):
        if not isinstance(part, dict) or part.get("type") != "text":
            raise ChatError(f"{where}[{index}]", "must be a text part ({'type': 'text', ...})")
        text = part.get("text")
        if not isinstance(text, str):
            raise ChatError(f"{where}[{index}].text", "must be a string")
        texts.append(text)
    return "\n".join(texts)


def references_section(references: list[query_pb2.Reference]) -> str:
    """The block that closes an answer: one line per cited document, by its number."""
    if not references:
        return ""
    lines = [f"- [{r.reference_id}] {r.file_path or r.doc_id}" for r in references]
    return "\n\n### References\n\n" + "\n".join(lines)


def reference_fields(references: list[query_pb2.Reference]) -> list[dict[str, str]]:
    return [
        {"reference_id": r.reference_id, "doc_id": r.doc_id, "file_path": r.file_path}
        for r in references
    ]


@dataclass(frozen=True, slots=True)
class Completion:
    """The identity every part of one reply shares."""

    model: str
    id: str
    created: int

    @classmethod
    def start(cls, model: str) -> Completion:
        return cls(model, f"chatcmpl-{uuid.uuid4().hex}", int(time.time()))

    def reply(self, answer: str, references: list[query_pb2.Reference]) -> dict[str, Any]:
        message = {"role": "assistant", "content": answer + references_section(references)}
        return {
            **self._head("chat.completion"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "references": reference_fields(references),
        }

    def chunk(self, delta: dict[str, str], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {**self._head("chat.completion.chunk"), "choices": [choice]}

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}


def model_list(created: int) -> dict[str, Any]:
    """GET /v1/models."""
    data = [{"id": n, "object": "model", "created": created, "owned_by": OWNER} for n in models()]
    return {"object": "list", "data": data}


def error_body(message: str, kind: str, param: str | None, code: str | None) -> dict[str, Any]:
    """OpenAI's error object: what its clients raise as APIError with these fields."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}
