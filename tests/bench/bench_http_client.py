"""What one LLM request costs the caller's CPU, by HTTP client, against the test server.

With an instant LLM the client's own work is a large part of indexing: sampled with py-spy,
the openai client was 52% of the event loop's busy time in `bench_scale corpus` (888
requests), which is why chat completions and embeddings now go through
`providers.endpoint.JsonEndpoint` (aiohttp, plain JSON). This measures that cost alone:
extraction-sized chat requests (a 4,000-character system prompt), `--in-flight` at once,
through

- `OpenAIChat.complete`, ragstream's own path (JsonEndpoint, its span, the parsed reply);
- `JsonEndpoint.post` alone;
- the openai client's `post` over httpx, answered as plain JSON (the path before);
- the same over openai's aiohttp transport (`DefaultAioHttpClient`);
- a plain aiohttp request, the floor.

The server runs in a process of its own, so its CPU is not counted. On demand:

    .venv/bin/python -m tests.bench.bench_http_client [--requests 600] [--in-flight 8]

On the 2-core machine (2026-12-02, 600 requests, 8 in flight, three rounds), CPU ms per
request: OpenAIChat.complete 0.13, 0.16, 0.13; JsonEndpoint.post 0.12, 0.14, 0.13; openai
post over httpx 0.88, 0.82, 0.77, over aiohttp 0.45, 0.46, 0.56; plain aiohttp 0.13, 0.16,
0.19. Before JsonEndpoint, OpenAIChat.complete (the openai post, its span, a typed
ChatCompletion) took 1.25 and 1.61 ms. An aiohttp session with trust_env reads the proxy
environment and ~/.netrc on every request, 0.45 ms of it: JsonEndpoint resolves its proxy
once instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable

import aiohttp
from openai import AsyncOpenAI, DefaultAioHttpClient
from pydantic import SecretStr

from ragstream.common.config import LLMConfig
from ragstream.common.providers.endpoint import JsonEndpoint, RetryPolicy
from ragstream.common.providers.llm import ChatMessage, OpenAIChat
from tests.bench.bench_scale import llm_in_subprocess

SYSTEM = "x" * 4000
PASSAGE = "Passage: Alice Smith met Bob Jones in Paris."
BODY = {
    "model": "test-chat",
    "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": PASSAGE}],
}
Call = Callable[[], Awaitable[object]]


async def cpu_ms_per_request(call: Call, requests: int, in_flight: int) -> float:
    slots = asyncio.Semaphore(in_flight)

    async def one() -> object:
        async with slots:
            return await call()

    await one()  # connections open, imports done
    began = time.process_time()
    await asyncio.gather(*(one() for _ in range(requests)))
    return (time.process_time() - began) * 1000 / requests


async def ragstream_chat(base_url: str, requests: int, in_flight: int) -> float:
    cfg = LLMConfig(
        provider="openai", model="test-chat", base_url=base_url, api_key=SecretStr("test")
    )
    chat = OpenAIChat(cfg)
    messages = [ChatMessage("system", SYSTEM), ChatMessage("user", PASSAGE)]
    try:
        return await cpu_ms_per_request(lambda: chat.complete(messages), requests, in_flight)
    finally:
        await chat.close()


async def openai_post(base_url: str, requests: int, in_flight: int, aio: bool) -> float:
    http = {"http_client": DefaultAioHttpClient()} if aio else {}
    client = AsyncOpenAI(base_url=base_url, api_key="test", **http)  # type: ignore[arg-type]
    try:
        return await cpu_ms_per_request(
            lambda: client.post("/chat/completions", body=BODY, cast_to=object),
            requests,
            in_flight,
        )
    finally:
        await client.close()


async def endpoint_post(base_url: str, requests: int, in_flight: int) -> float:
    endpoint = JsonEndpoint("test", base_url, SecretStr("test"), 60.0, RetryPolicy(1))
    try:
        return await cpu_ms_per_request(
            lambda: endpoint.post("/chat/completions", BODY), requests, in_flight
        )
    finally:
        await endpoint.close()


async def plain_aiohttp(base_url: str, requests: int, in_flight: int) -> float:
    async with aiohttp.ClientSession() as session:

        async def call() -> object:
            async with session.post(f"{base_url}/chat/completions", json=BODY) as response:
                return json.loads(await response.read())

        return await cpu_ms_per_request(call, requests, in_flight)


async def measure(base_url: str, requests: int, in_flight: int) -> dict[str, float]:
    return {
        "OpenAIChat.complete": await ragstream_chat(base_url, requests, in_flight),
        "JsonEndpoint.post": await endpoint_post(base_url, requests, in_flight),
        "openai post, httpx": await openai_post(base_url, requests, in_flight, aio=False),
        "openai post, aiohttp": await openai_post(base_url, requests, in_flight, aio=True),
        "plain aiohttp": await plain_aiohttp(base_url, requests, in_flight),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--in-flight", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with llm_in_subprocess("six") as (base_url, _, _):
        for round_ in range(1, args.rounds + 1):
            figures = asyncio.run(measure(base_url, args.requests, args.in_flight))
            for client, ms in figures.items():
                print(f"round {round_}  {client:<22} {ms:6.2f} ms CPU a request")


if __name__ == "__main__":
    main()
