"""The OpenAI-compatible test server, driven by the real openai client."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
import openai
import pytest
from openai import AsyncOpenAI

from ragstream.common.providers.embedding import hash_embed
from ragstream.testing.openai_server import LOG_PATH, OpenAITestServer
from ragstream.testing.openai_wire import split_tokens, token_count


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer() as running:
        yield running


def client(server: OpenAITestServer, **options: Any) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=server.base_url, api_key="test", **options)


def test_split_tokens_rejoins_to_the_text() -> None:
    for text in ["", "  ", "one", " leading and trailing  ", "a\nb\tc"]:
        assert "".join(split_tokens(text)) == text
    assert split_tokens("a bb  ccc") == ["a", " bb", "  ccc"]


@pytest.mark.parametrize("text", ["", " ", "a", " a ", "a bb\n\tccc \u3000d", "x\u00a0y", "\n\n"])
def test_token_count_counts_the_pieces_split_tokens_makes(text: str) -> None:
    assert token_count(text) == len(split_tokens(text))


async def test_binds_loopback_on_a_free_port(server: OpenAITestServer) -> None:
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.port > 0
    models = await client(server).models.list()
    assert {model.id for model in models.data} == {"test-chat", "test-embedding"}


async def test_chat_default_reply_echoes_the_last_user_message(server: OpenAITestServer) -> None:
    response = await client(server).chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "what is   ragstream"},
        ],
    )
    assert response.choices[0].message.content == "echo: what is ragstream"
    assert response.choices[0].finish_reason == "stop"
    assert response.usage is not None
    assert response.usage.prompt_tokens == 5
    assert response.usage.completion_tokens == 4
    assert server.log.completed["chat"] == 1
    assert server.log.bodies["chat"][0]["messages"][1]["content"] == "what is   ragstream"


async def test_scripted_replies_come_first_then_the_responder(server: OpenAITestServer) -> None:
    seen: list[tuple[int, object]] = []

    def responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        seen.append((len(messages), body.get("temperature")))
        return "from the responder"

    server.set_responder(responder)
    server.script_replies("first", "second")
    api = client(server)
    texts = []
    for _ in range(3):
        response = await api.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "q"}], temperature=0.5
        )
        texts.append(response.choices[0].message.content)
    assert texts == ["first", "second", "from the responder"]
    assert seen == [(1, 0.5)]


async def test_max_tokens_truncates_with_finish_reason_length(server: OpenAITestServer) -> None:
    server.script_replies("one two three four five")
    response = await client(server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "q"}], max_tokens=2
    )
    assert response.choices[0].message.content == "one two"
    assert response.choices[0].finish_reason == "length"


async def test_stream_sends_chunks_usage_and_done(server: OpenAITestServer) -> None:
    server.script_replies("alpha beta gamma")
    stream = await client(server).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "q"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    deltas = [
        c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content
    ]
    assert deltas == ["alpha", " beta", " gamma"]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 3
    assert server.log.completed["chat"] == 1
    assert server.log.cancelled["chat"] == 0


async def test_embeddings_float_and_base64_agree(server: OpenAITestServer) -> None:
    api = client(server)
    texts = ["graph based retrieval", "streaming index"]
    as_float = await api.embeddings.create(model="e", input=texts, encoding_format="float")
    as_default = await api.embeddings.create(model="e", input=texts)
    formats = [body.get("encoding_format") for body in server.log.bodies["embeddings"]]
    assert formats == ["float", "base64"]
    floats = np.array([item.embedding for item in as_float.data], dtype=np.float32)
    decoded = np.array([item.embedding for item in as_default.data], dtype=np.float32)
    np.testing.assert_array_equal(floats, decoded)
    np.testing.assert_allclose(floats, hash_embed(texts, 384), atol=1e-6)
    assert server.log.embedding_batch_sizes == [2, 2]


async def test_embeddings_honour_the_dimensions_parameter(server: OpenAITestServer) -> None:
    response = await client(server).embeddings.create(model="e", input="one text", dimensions=16)
    assert len(response.data[0].embedding) == 16
    assert response.usage.prompt_tokens == 2


async def test_embeddings_reject_token_arrays(server: OpenAITestServer) -> None:
    with pytest.raises(openai.BadRequestError):
        await client(server, max_retries=0).embeddings.create(model="e", input=[[1, 2, 3]])


async def test_embedding_latency_is_applied(server: OpenAITestServer) -> None:
    server.set_latency("embeddings", 0.1)
    started = time.perf_counter()
    await client(server).embeddings.create(model="e", input=["x"])
    assert time.perf_counter() - started >= 0.1


async def test_injected_failures_then_success(server: OpenAITestServer) -> None:
    server.fail_next("models", 1, status=429)
    api = client(server, max_retries=0)
    with pytest.raises(openai.RateLimitError):
        await api.models.list()
    await api.models.list()
    assert server.log.received["models"] == 2
    assert server.log.failed["models"] == 1
    assert server.log.completed["models"] == 1


async def test_abandoned_request_is_recorded_as_cancelled(server: OpenAITestServer) -> None:
    server.set_latency("chat", 2.0)
    api = client(server, max_retries=0, timeout=0.2)
    with pytest.raises(openai.APITimeoutError):
        await api.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    async with asyncio.timeout(2):
        await server.log.wait_for(lambda log: log.cancelled["chat"] == 1)
    assert server.log.completed["chat"] == 0


async def test_peak_in_flight_counts_concurrent_requests(server: OpenAITestServer) -> None:
    server.set_latency("embeddings", 0.1)
    api = client(server)
    async with asyncio.TaskGroup() as group:
        for _ in range(3):
            group.create_task(api.embeddings.create(model="e", input=["x"]))
    assert server.log.peak_in_flight["embeddings"] == 3
    assert server.log.in_flight["embeddings"] == 0


def test_runs_as_a_module() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "ragstream.testing.openai_server", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        base_url = line.rsplit(" ", 1)[-1].strip()
        assert base_url.startswith("http://127.0.0.1:")

        async def list_models() -> list[str]:
            api = AsyncOpenAI(base_url=base_url, api_key="test")
            return [model.id for model in (await api.models.list()).data]

        assert "test-chat" in asyncio.run(list_models())
    finally:
        process.terminate()
        process.wait(timeout=10)


def shouting(messages: list[dict[str, object]], body: dict[str, object]) -> str:
    """A responder for the module test: the last message, upper-cased."""
    return str(messages[-1]["content"]).upper()


def test_runs_as_a_module_with_a_responder_and_reports_its_log() -> None:
    command = [
        sys.executable, "-m", "ragstream.testing.openai_server", "--port", "0",
        "--responder", "tests.unit.test_openai_server:shouting",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().rsplit(" ", 1)[-1].strip()

        async def ask() -> str:
            api = AsyncOpenAI(base_url=base_url, api_key="test")
            await api.embeddings.create(model="e", input=["a", "b", "c"])
            reply = await api.chat.completions.create(
                model="test-chat", messages=[{"role": "user", "content": "hello there"}]
            )
            return reply.choices[0].message.content or ""

        assert asyncio.run(ask()) == "HELLO THERE"
        root = base_url.removesuffix("/v1")
        with urllib.request.urlopen(root + LOG_PATH, timeout=10) as response:
            log = json.load(response)
        assert [body["messages"] for body in log["chat"]] == [
            [{"role": "user", "content": "hello there"}]
        ]
        assert log["embedding_batch_sizes"] == [3]
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_responder_that_does_not_import_is_one_line() -> None:
    command = [
        sys.executable, "-m", "ragstream.testing.openai_server", "--responder", "no.such:thing",
    ]  # fmt: skip
    result = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--responder no.such:thing" in result.stderr
    assert "Traceback" not in result.stderr
