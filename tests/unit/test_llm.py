"""OpenAIChat against the OpenAI-compatible test server: `complete` through its JsonEndpoint,
`stream` through the real openai client; and the parsing of a completion."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ragstream.common.config import LLMConfig
from ragstream.common.providers import ProviderError
from ragstream.common.providers.llm import (
    ChatMessage,
    Completion,
    OpenAIChat,
    build_chat_model,
    parse_completion,
)
from ragstream.testing.openai_server import OpenAITestServer

QUESTION = [ChatMessage("system", "answer briefly"), ChatMessage("user", "what is a graph")]


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer() as running:
        yield running


def config(server: OpenAITestServer, **overrides: Any) -> LLMConfig:
    values: dict[str, Any] = {
        "provider": "openai",
        "model": "test-chat",
        "base_url": server.base_url,
        "api_key": "test",
        "temperature": 0.3,
        "max_output_tokens": 64,
    }
    return LLMConfig.model_validate(values | overrides)


@pytest.fixture
async def chat(server: OpenAITestServer) -> AsyncIterator[OpenAIChat]:
    model = OpenAIChat(config(server))
    yield model
    await model.close()


def test_build_chat_model_by_provider() -> None:
    assert build_chat_model(LLMConfig.model_validate({})) is None
    model = build_chat_model(
        LLMConfig.model_validate({"provider": "openai", "model": "m", "base_url": "http://x/v1"})
    )
    assert isinstance(model, OpenAIChat)
    assert model.name == "openai:m"


async def test_complete_returns_text_and_usage(server: OpenAITestServer, chat: OpenAIChat) -> None:
    completion = await chat.complete(QUESTION)
    assert completion.text == "echo: what is a graph"
    assert completion.prompt_tokens == 6
    assert completion.completion_tokens == 5
    body = server.log.bodies["chat"][0]
    assert body["model"] == "test-chat"
    assert body["messages"] == [
        {"role": "system", "content": "answer briefly"},
        {"role": "user", "content": "what is a graph"},
    ]
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 64


async def test_complete_passes_call_options(server: OpenAITestServer, chat: OpenAIChat) -> None:
    await chat.complete(QUESTION, max_tokens=3, temperature=0.0)
    body = server.log.bodies["chat"][0]
    assert (body["max_tokens"], body["temperature"]) == (3, 0.0)


async def test_stream_yields_deltas_in_order(server: OpenAITestServer, chat: OpenAIChat) -> None:
    server.script_replies("first second third fourth")
    deltas = [delta async for delta in chat.stream(QUESTION)]
    assert deltas == ["first", " second", " third", " fourth"]
    assert server.log.bodies["chat"][0]["stream"] is True
    assert server.log.completed["chat"] == 1


async def test_first_delta_arrives_before_the_server_finishes(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies("one two three four five")
    server.set_token_delay(0.1)
    async with contextlib.aclosing(chat.stream(QUESTION)) as deltas:
        first = await anext(deltas)
        assert first == "one"
        assert server.log.completed["chat"] == 0
        rest = [delta async for delta in deltas]
    assert "".join([first, *rest]) == "one two three four five"
    assert server.log.completed["chat"] == 1


async def test_cancelling_the_consumer_cancels_the_upstream_request(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(" ".join(["word"] * 50))
    server.set_token_delay(0.05)
    got_one = asyncio.Event()

    async def consume() -> None:
        async for _ in chat.stream(QUESTION):
            got_one.set()

    task = asyncio.create_task(consume())
    await got_one.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    async with asyncio.timeout(2):
        await server.log.wait_for(lambda log: log.cancelled["chat"] == 1)
    assert server.log.completed["chat"] == 0


async def test_closing_the_stream_early_cancels_the_upstream_request(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies(" ".join(["word"] * 50))
    server.set_token_delay(0.05)
    async with contextlib.aclosing(chat.stream(QUESTION)) as deltas:
        async for _ in deltas:
            break
    async with asyncio.timeout(2):
        await server.log.wait_for(lambda log: log.cancelled["chat"] == 1)


async def test_retries_server_errors_then_succeeds(server: OpenAITestServer) -> None:
    server.fail_next("chat", 2, status=503, retry_after_ms=10)
    model = OpenAIChat(config(server, max_retries=3))
    completion = await model.complete(QUESTION)
    await model.close()
    assert completion.text == "echo: what is a graph"
    assert server.log.received["chat"] == 3
    assert server.log.failed["chat"] == 2


async def test_stream_retries_rate_limits_before_the_first_chunk(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.fail_next("chat", 1, status=429, retry_after_ms=10)
    assert "".join([delta async for delta in chat.stream(QUESTION)]) == "echo: what is a graph"
    assert server.log.received["chat"] == 2


async def test_failure_after_retries_is_a_provider_error(server: OpenAITestServer) -> None:
    server.fail_next("chat", 5, status=503, retry_after_ms=10)
    model = OpenAIChat(config(server, max_retries=1))
    with pytest.raises(ProviderError, match="openai:test-chat"):
        await model.complete(QUESTION)
    with pytest.raises(ProviderError, match="503"):
        async for _ in model.stream(QUESTION):
            pass
    await model.close()
    assert server.log.received["chat"] == 4


async def test_a_refused_request_is_not_retried(server: OpenAITestServer) -> None:
    server.fail_next("chat", 1, status=400)
    model = OpenAIChat(config(server, max_retries=3))
    with pytest.raises(ProviderError, match=r"/chat/completions: HTTP 400: .*injected failure"):
        await model.complete(QUESTION)
    await model.close()
    assert server.log.received["chat"] == 1


def test_parse_completion_reads_the_first_choice_and_the_usage() -> None:
    reply = parse_completion(
        {
            "id": "c1",
            "model": "m",
            "choices": [
                {"message": {"role": "assistant", "content": "hi"}, "finish_reason": "length"},
                {"message": {"role": "assistant", "content": "other"}},
            ],
            "usage": {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9},
        }
    )
    assert reply.completion == Completion("hi", 7, 2, "length")
    assert (reply.model, reply.id, reply.usage_reported) == ("m", "c1", True)
    bare = parse_completion({"choices": [{"message": {"content": None}}]})
    assert bare.completion == Completion("", 0, 0, "")
    assert not bare.usage_reported


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ([], "no choices"),
        ({"choices": []}, "no choices"),
        ({"choices": ["x"]}, "no choices"),
        ({"choices": [{"text": "legacy"}]}, "no message"),
        ({"choices": [{"message": {"content": ["a", "b"]}}]}, "not text"),
    ],
)
def test_parse_completion_refuses_what_is_not_a_completion(payload: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_completion(payload)


async def test_concurrency_is_limited(server: OpenAITestServer) -> None:
    server.set_latency("chat", 0.1)
    model = OpenAIChat(config(server, concurrency=2))
    async with asyncio.TaskGroup() as group:
        for _ in range(5):
            group.create_task(model.complete(QUESTION))
    await model.close()
    assert server.log.completed["chat"] == 5
    assert server.log.peak_in_flight["chat"] == 2
