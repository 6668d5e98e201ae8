"""Stage 2's LLM summaries against the OpenAI-compatible test server: cached, order-free,
map-reduce when the fragments exceed the context."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ragstream.common.config import LLMConfig
from ragstream.common.providers.llm import ChatMessage, OpenAIChat
from ragstream.indexer.stages.extract.llm_calls import CachedChat
from ragstream.indexer.stages.summarize import LLMSummarizer, SummaryTooLargeError
from ragstream.testing.openai_server import OpenAITestServer
from tests.support.chat import MemoryCache, llm_config


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer() as running:
        yield running


@pytest.fixture
async def chat(server: OpenAITestServer) -> AsyncIterator[OpenAIChat]:
    model = OpenAIChat(llm_config(server))
    yield model
    await model.close()


def summarizer(chat: OpenAIChat, cache: MemoryCache, llm: LLMConfig) -> LLMSummarizer:
    return LLMSummarizer(chat, cache, "test-chat", llm)


async def test_summary_is_one_cached_call_when_it_fits(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    cache = MemoryCache()
    server.script_replies("Kestrel Polymers makes seals in Aberdeen.")
    ext = summarizer(chat, cache, llm_config(server))
    descriptions = ["Makes seals.", "Based in Aberdeen.", "Acquired in 2024."]
    summary = await ext.summary("Kestrel Polymers", descriptions)
    assert summary.text == "Kestrel Polymers makes seals in Aberdeen."
    assert len(summary.cache_keys) == 1
    user = server.log.bodies["chat"][0]["messages"][-1]["content"]
    assert "Entity: Kestrel Polymers" in user
    assert all(f"- {text}" in user for text in descriptions)

    again = await ext.summary("Kestrel Polymers", descriptions)
    assert again == summary
    assert server.log.received["chat"] == 1


async def test_the_same_fragments_in_another_order_are_not_summarized_again(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies("Kestrel Polymers makes seals in Aberdeen.")
    ext = summarizer(chat, MemoryCache(), llm_config(server))
    descriptions = ["Makes seals.", "Based in Aberdeen.", "Acquired in 2024."]
    first = await ext.summary("Kestrel Polymers", descriptions)
    again = await ext.summary("Kestrel Polymers", descriptions[::-1] + descriptions[:1])
    assert again.text == first.text
    assert server.log.received["chat"] == 1


async def test_summary_of_a_relation_names_both_ends(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.script_replies("They are related.")
    ext = summarizer(chat, MemoryCache(), llm_config(server))
    await ext.summary(("Tern S3", "Kestrel Polymers"), ["a", "b"])
    user = server.log.bodies["chat"][0]["messages"][-1]["content"]
    assert "Tern S3" in user and "Kestrel Polymers" in user


def _count_fragments(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    listed = [line for line in messages[-1]["content"].splitlines() if line.startswith("- ")]
    return f"summary of {len(listed)} fragments"


async def test_summary_map_reduces_when_the_fragments_exceed_the_context(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    server.set_responder(_count_fragments)
    llm = llm_config(server, context_tokens=700, max_output_tokens=100)
    cache = MemoryCache()
    ext = summarizer(chat, cache, llm)
    descriptions = [f"Fragment {i}: " + "the seal failed in cold water " * 6 for i in range(40)]
    summary = await ext.summary("Tern S3", descriptions, max_tokens=60)

    calls = server.log.received["chat"]
    assert calls > 2
    assert len(summary.cache_keys) == calls
    assert summary.text.startswith("summary of ")
    probe = CachedChat(chat, MemoryCache(), "test-chat", llm)
    for body in server.log.bodies["chat"]:
        messages = [ChatMessage(m["role"], m["content"]) for m in body["messages"]]
        assert probe.prompt_tokens(messages) <= llm.context_tokens - llm.max_output_tokens
    prompts = [body["messages"][-1]["content"] for body in server.log.bodies["chat"]]
    listed = [line for prompt in prompts for line in prompt.splitlines()]
    # Every fragment went into exactly one map call; partial summaries were reduced.
    assert sum(line.startswith("- Fragment") for line in listed) == len(descriptions)
    assert any(line.startswith("- summary of") for line in listed)

    await ext.summary("Tern S3", descriptions, max_tokens=60)
    assert server.log.received["chat"] == calls


async def test_summary_of_nothing_makes_no_call(server: OpenAITestServer, chat: OpenAIChat) -> None:
    summary = await summarizer(chat, MemoryCache(), llm_config(server)).summary("A", ["", " "])
    assert (summary.text, summary.cache_keys) == ("", ())
    assert server.log.received["chat"] == 0


async def test_summary_refuses_a_context_too_small_for_the_prompt(
    server: OpenAITestServer, chat: OpenAIChat
) -> None:
    llm = llm_config(server, context_tokens=512, max_output_tokens=400)
    with pytest.raises(SummaryTooLargeError, match="context_tokens"):
        await summarizer(chat, MemoryCache(), llm).summary("A", ["x"])
