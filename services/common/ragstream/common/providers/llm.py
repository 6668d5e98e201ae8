"""Chat models: the LLM behind keyword extraction, entity extraction, summaries and answers.

One implementation, `OpenAIChat`, talks to any OpenAI-compatible /v1/chat/completions endpoint.
With `llm.provider = "none"` there is no chat model at all (`build_chat_model` returns None) and
callers take their LLM-free paths; they never get a stand-in that pretends to be a model.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, Protocol
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletionMessageParam
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from ragstream.common.config import LLMConfig
from ragstream.common.providers import ProviderError, openai_base_url, openai_client
from ragstream.common.providers.backlog import Slots, limited
from ragstream.common.providers.endpoint import JsonEndpoint, RetryPolicy
from ragstream.common.telemetry import span

Role = Literal["system", "user", "assistant"]
COMPLETIONS = "/chat/completions"


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    prompt_tokens: int
    """As counted by the provider; 0 when it reports no usage."""
    completion_tokens: int
    finish_reason: str = ""
    """Why the model stopped, as the provider says: "stop", "length" (cut at the output
    limit), ...; empty when it says nothing."""


class ChatModel(Protocol):
    @property
    def name(self) -> str:
        """Provider and model, e.g. "openai:gpt-4o-mini"; part of every LLM cache key."""
        ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncGenerator[str, None]:
        """Text deltas as the model produces them.

        An async generator, so that it can be closed: consume it inside
        `contextlib.aclosing(...)` (or to the end). Closing it, or cancelling the consumer,
        closes the HTTP stream, so the server stops generating.
        """
        ...

    async def close(self) -> None: ...


def _wire(messages: Sequence[ChatMessage]) -> list[ChatCompletionMessageParam]:
    wire: list[ChatCompletionMessageParam] = []
    for message in messages:
        if message.role == "system":
            wire.append({"role": "system", "content": message.content})
        elif message.role == "user":
            wire.append({"role": "user", "content": message.content})
        else:
            wire.append({"role": "assistant", "content": message.content})
    return wire


class OpenAIChat:
    """An OpenAI-compatible chat endpoint (OpenAI, Azure, vLLM, Ollama, ...).

    `complete` posts plain JSON through a `JsonEndpoint`; `stream` goes through the openai
    client, which parses the server-sent events. Both retry connection errors, 408, 409, 429
    and 5xx with backoff (a stream only before its first chunk); at most `concurrency`
    requests (streams included, until they end) are in flight. `max_tokens` is sent rather
    than `max_completion_tokens` because self-hosted servers widely accept only the former.
    """

    def __init__(self, cfg: LLMConfig) -> None:
        self.name = f"openai:{cfg.model}"
        self._cfg = cfg
        url = openai_base_url(cfg.base_url)
        self._endpoint = JsonEndpoint(
            self.name, url, cfg.api_key, cfg.timeout_s, RetryPolicy(cfg.max_retries + 1)
        )
        self._client = openai_client(
            base_url=url,
            api_key=cfg.api_key,
            timeout_s=cfg.timeout_s,
            max_retries=cfg.max_retries,
        )
        self._server = server_attributes(url)
        self._slots = Slots(cfg.concurrency)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> Completion:
        limit, temperature = (
            max_tokens or self._cfg.max_output_tokens,
            self._temperature(temperature),
        )
        body = {
            "model": self._cfg.model,
            "messages": _wire(messages),
            "max_tokens": limit,
            "temperature": temperature,
        }
        async with limited(self._slots):
            with self._span(limit, temperature, current=True) as call:
                payload = await self._endpoint.post(COMPLETIONS, body)
                try:
                    reply = parse_completion(payload)
                except ValueError as exc:
                    raise self._endpoint.error(f"unexpected answer: {exc}", COMPLETIONS) from exc
                done = reply.completion
                _annotate(call, reply.model, reply.id, [done.finish_reason])
                if reply.usage_reported:
                    _annotate_usage(call, done.prompt_tokens, done.completion_tokens)
        return done

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
    ) -> AsyncGenerator[str, None]:
        limit, temperature = (
            max_tokens or self._cfg.max_output_tokens,
            self._temperature(temperature),
        )
        # The span is not made current: this generator yields while it is open.
        async with limited(self._slots):
            with self._span(limit, temperature, current=False) as call:
                try:
                    response = await self._client.chat.completions.create(
                        model=self._cfg.model,
                        messages=_wire(messages),
                        max_tokens=limit,
                        temperature=temperature,
                        stream=True,
                    )
                    # Leaving this block by any route (end, error, cancellation, aclose) closes
                    # the response; a half-read HTTP/1.1 response closes its connection.
                    async with response:
                        async for chunk in response:
                            reasons = [c.finish_reason for c in chunk.choices if c.finish_reason]
                            _annotate(call, chunk.model, chunk.id, reasons)
                            if (usage := chunk.usage) is not None:
                                _annotate_usage(call, usage.prompt_tokens, usage.completion_tokens)
                            for choice in chunk.choices:
                                if choice.delta.content:
                                    yield choice.delta.content
                except openai.APIError as exc:
                    raise self._error(exc) from exc

    async def close(self) -> None:
        await self._endpoint.close()
        await self._client.close()

    def _span(
        self, max_tokens: int, temperature: float, current: bool
    ) -> AbstractContextManager[Span]:
        """A GenAI client span: model, limits and endpoint; never the messages or the key."""
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": self._cfg.model,
            "gen_ai.request.max_tokens": max_tokens,
            "gen_ai.request.temperature": temperature,
            **self._server,
        }
        return span(
            f"chat {self._cfg.model}", kind=SpanKind.CLIENT, attributes=attributes, current=current
        )

    def _temperature(self, temperature: float | None) -> float:
        return self._cfg.temperature if temperature is None else temperature

    def _error(self, exc: openai.APIError) -> ProviderError:
        return ProviderError(f"{self.name} at {self._endpoint.url}: {exc}")


@dataclass(frozen=True, slots=True)
class Reply:
    completion: Completion
    model: str
    id: str
    usage_reported: bool


def parse_completion(payload: object) -> Reply:
    """The first choice of a /chat/completions answer, with the usage it reports (0 when it
    reports none); ValueError when the answer is not one."""
    if not isinstance(payload, dict):
        raise ValueError("the answer has no choices")
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("the answer has no choices")
    first = choices[0]
    message = first.get("message")
    if not isinstance(message, dict):
        raise ValueError("the first choice has no message")
    text = message.get("content") or ""
    if not isinstance(text, str):
        raise ValueError(f"the message content is not text: {text!r:.80}")
    reported = payload.get("usage")
    usage = reported if isinstance(reported, dict) else {}
    completion = Completion(
        text=text,
        prompt_tokens=_count(usage.get("prompt_tokens")),
        completion_tokens=_count(usage.get("completion_tokens")),
        finish_reason=str(first.get("finish_reason") or ""),
    )
    model, response_id = str(payload.get("model") or ""), str(payload.get("id") or "")
    return Reply(completion, model, response_id, usage_reported=bool(usage))


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def server_attributes(url: str) -> dict[str, AttributeValue]:
    """server.address and server.port of an endpoint URL, for its client spans."""
    parts = urlsplit(url)
    attributes: dict[str, AttributeValue] = {"server.address": parts.hostname or ""}
    if parts.port is not None:
        attributes["server.port"] = parts.port
    return attributes


def _annotate(call: Span, model: str, response_id: str, finish_reasons: Sequence[str]) -> None:
    """What the response says about itself (a stream says it piece by piece)."""
    call.set_attributes({"gen_ai.response.model": model, "gen_ai.response.id": response_id})
    reasons = [reason for reason in finish_reasons if reason]
    if reasons:
        call.set_attribute("gen_ai.response.finish_reasons", reasons)


def _annotate_usage(call: Span, input_tokens: int, output_tokens: int) -> None:
    call.set_attribute("gen_ai.usage.input_tokens", input_tokens)
    call.set_attribute("gen_ai.usage.output_tokens", output_tokens)


def build_chat_model(cfg: LLMConfig) -> ChatModel | None:
    """None when `llm.provider` is "none": callers then use their LLM-free paths."""
    if cfg.provider == "none":
        return None
    return OpenAIChat(cfg)
