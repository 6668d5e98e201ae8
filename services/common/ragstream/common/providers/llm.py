"""Chat models: the LLM behind keyword extraction, entity extraction, summaries and answers.

One implementation, `OpenAIChat`, talks to any OpenAI-compatible /v1/chat/completions endpoint.
With `llm.provider = "none"` there is no chat model at all (`build_chat_model` returns None) and
callers take their LLM-free paths; they never get a stand-in that pretends to be a model.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, Protocol

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
from openai.types.completion_usage import CompletionUsage
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue

from ragstream.common.config import LLMConfig
from ragstream.common.providers import ProviderError, openai_client
from ragstream.common.telemetry import span

Role = Literal["system", "user", "assistant"]


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

    The client retries connection errors, 429 and 5xx with backoff; at most `concurrency`
    requests (streams included, until they end) are in flight. `max_tokens` is sent rather than
    `max_completion_tokens` because self-hosted servers widely accept only the former.
    """

    def __init__(self, cfg: LLMConfig) -> None:
        self.name = f"openai:{cfg.model}"
        self._cfg = cfg
        self._client = openai_client(
            base_url=cfg.base_url,
            api_key=cfg.api_key,
            timeout_s=cfg.timeout_s,
            max_retries=cfg.max_retries,
        )
        self._semaphore = asyncio.Semaphore(cfg.concurrency)

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
        async with self._semaphore:
            with self._span(limit, temperature, current=True) as call:
                body = {
                    "model": self._cfg.model,
                    "messages": _wire(messages),
                    "max_tokens": limit,
                    "temperature": temperature,
                }
                try:
                    # The client's own post, with its retries, timeouts and error types:
                    # `chat.completions.create` would first walk every message through its
                    # typed-parameter transform, about 1.5 ms of the event loop per
                    # extraction-sized call, for a body that is already plain JSON.
                    response = await self._client.post(
                        "/chat/completions", body=body, cast_to=ChatCompletion
                    )
                except openai.APIError as exc:
                    raise self._error(exc) from exc
                reasons = [choice.finish_reason or "" for choice in response.choices]
                _annotate(call, response.model, response.id, reasons, response.usage)
        if not response.choices:
            raise ProviderError(f"{self.name} answered with no choices")
        usage = response.usage
        return Completion(
            text=response.choices[0].message.content or "",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            finish_reason=response.choices[0].finish_reason or "",
        )

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
        async with self._semaphore:
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
                            _annotate(call, chunk.model, chunk.id, reasons, chunk.usage)
                            for choice in chunk.choices:
                                if choice.delta.content:
                                    yield choice.delta.content
                except openai.APIError as exc:
                    raise self._error(exc) from exc

    async def close(self) -> None:
        await self._client.close()

    def _span(
        self, max_tokens: int, temperature: float, current: bool
    ) -> AbstractContextManager[Span]:
        """A GenAI client span: model, limits and endpoint; never the messages or the key."""
        url = self._client.base_url
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": self._cfg.model,
            "gen_ai.request.max_tokens": max_tokens,
            "gen_ai.request.temperature": temperature,
            "server.address": url.host,
        }
        if url.port is not None:
            attributes["server.port"] = url.port
        return span(
            f"chat {self._cfg.model}", kind=SpanKind.CLIENT, attributes=attributes, current=current
        )

    def _temperature(self, temperature: float | None) -> float:
        return self._cfg.temperature if temperature is None else temperature

    def _error(self, exc: openai.APIError) -> ProviderError:
        return ProviderError(f"{self.name} at {self._client.base_url}: {exc}")


def _annotate(
    call: Span,
    model: str,
    response_id: str,
    finish_reasons: Sequence[str],
    usage: CompletionUsage | None,
) -> None:
    """What the response says about itself (a stream says it piece by piece)."""
    call.set_attributes({"gen_ai.response.model": model, "gen_ai.response.id": response_id})
    if finish_reasons:
        call.set_attribute("gen_ai.response.finish_reasons", list(finish_reasons))
    if usage is not None:
        call.set_attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
        call.set_attribute("gen_ai.usage.output_tokens", usage.completion_tokens)


def build_chat_model(cfg: LLMConfig) -> ChatModel | None:
    """None when `llm.provider` is "none": callers then use their LLM-free paths."""
    if cfg.provider == "none":
        return None
    return OpenAIChat(cfg)
