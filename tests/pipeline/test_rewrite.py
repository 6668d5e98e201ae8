"""Query rewriting (HyDE, multi-query) through the OpenAI-compatible test server: the
prompts sent, what is embedded and searched, RRF over sub-queries, the cache, and the
plain question whenever the LLM fails, is missing or the deadline is near."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from ragstream.common.config import LLMConfig, QueryDefaults
from ragstream.common.events import DocumentChange
from ragstream.common.models import SearchFilter
from ragstream.common.providers.embedding import HashEmbedder, Matrix
from ragstream.common.providers.llm import OpenAIChat
from ragstream.common.registry import Backends
from ragstream.common.timing import StageTimer
from ragstream.query.engine import QueryEngine
from ragstream.query.stages.rewrite import HYDE_PROMPT, parse_sub_queries
from ragstream.query.transport.convert import query_options
from ragstream.query.types import Mode, QueryInput, Retrieval, Rewrite
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import query_pb2
from tests.support.pipeline import embedded_settings, running_pipeline

WS = "rewrite"
DOCS = {
    "tern.md": "The Tern S3 sensor measures salinity in fish pens along the coast.",
    "skua.md": "The Skua 3 drone inspects nets under water for the Halvorsen fleet.",
    "petrel.md": "Petrel feeders dose pellets on a schedule set by the farm manager.",
}
HYPOTHETICAL = "A hypothetical passage: salinity sensors stand in the pens of coastal farms."
SUB_QUERIES = ["salinity sensor fish pens", "drone inspects nets under water"]
QUESTION = "What keeps an eye on both of them?"


class RecordingEmbedder(HashEmbedder):
    """The hashed embedder, remembering every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return await super().embed(texts)


def responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    prompt = str(messages[-1]["content"])
    if prompt.startswith("Write a short passage"):
        return HYPOTHETICAL
    if prompt.startswith("Split the question"):
        return "Here you go:\n```json\n" + str(SUB_QUERIES).replace("'", '"') + "\n```"
    return "echo"


@dataclass
class Setup:
    backends: Backends
    server: OpenAITestServer
    embedder: RecordingEmbedder

    def engine(self, *, llm: bool = True, min_seconds: float = 2.0) -> QueryEngine:
        chat = None
        if llm:
            cfg = LLMConfig(
                provider="openai",
                model="m",
                base_url=self.server.base_url,
                api_key="sk-test",
                max_retries=0,
            )
            chat = OpenAIChat(cfg)
        stores = self.backends.stores
        return QueryEngine(stores, self.embedder, chat, rewrite_min_seconds=min_seconds)

    def chat_prompts(self) -> list[str]:
        return [str(b["messages"][-1]["content"]) for b in self.server.log.bodies.get("chat", [])]


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    async with (
        OpenAITestServer(responder=responder) as server,
        running_pipeline(embedded_settings(tmp_path)) as pipeline,
    ):
        changes = [DocumentChange(WS, d, 1, False, t, d, {}, 1.0) for d, t in DOCS.items()]
        await pipeline.publish(changes)
        await pipeline.idle()
        yield Setup(pipeline.backends, server, RecordingEmbedder())


def question(
    rewrite: Rewrite, mode: Mode = Mode.NAIVE, deadline: float | None = None
) -> QueryInput:
    options = query_options(query_pb2.QueryParams(), QueryDefaults())
    options = replace(options, mode=mode, rewrite=rewrite, enable_rerank=False)
    return QueryInput(WS, QUESTION, options, SearchFilter(), deadline)


def docs(retrieval: Retrieval) -> list[str]:
    return [c.doc_id for c in retrieval.chunks]


async def test_hyde_embeds_the_hypothetical_answer_instead_of_the_question(setup: Setup) -> None:
    timer = StageTimer()
    await setup.engine().retrieve(question(Rewrite.HYDE), timer)
    assert setup.chat_prompts() == [HYDE_PROMPT.format(query=QUESTION)]
    assert HYPOTHETICAL in setup.embedder.texts
    assert QUESTION not in setup.embedder.texts  # BM25 searched it; nothing embedded it
    assert "rewrite" in dict(timer.items())


async def test_a_rewrite_is_cached_like_keywords(setup: Setup) -> None:
    engine = setup.engine()
    for _ in range(3):
        await engine.retrieve(question(Rewrite.HYDE), StageTimer())
        await engine.retrieve(question(Rewrite.MULTI_QUERY), StageTimer())
    assert len(setup.chat_prompts()) == 2  # one per strategy, then the cache


async def test_multi_query_searches_each_sub_query_and_fuses_them(setup: Setup) -> None:
    plain = await setup.engine().retrieve(question(Rewrite.NONE), StageTimer())
    fanned = await setup.engine().retrieve(question(Rewrite.MULTI_QUERY), StageTimer())
    prompt = setup.chat_prompts()[0]
    assert prompt.startswith("Split the question") and QUESTION in prompt and "at most 3" in prompt
    assert set(SUB_QUERIES) <= set(setup.embedder.texts)  # one embedding request for all
    # The question shares no word with the corpus; its sub-queries find the sensor and the
    # drone, one each, and the fused ranking holds both.
    assert "tern.md" not in docs(plain) and "skua.md" not in docs(plain)
    assert {"tern.md", "skua.md"} <= set(docs(fanned))


async def test_the_plain_question_is_used_when_the_llm_fails(setup: Setup) -> None:
    plain = await setup.engine().retrieve(question(Rewrite.NONE), StageTimer())
    setup.server.fail_next("chat", 1, status=500)
    failed = await setup.engine().retrieve(question(Rewrite.HYDE), StageTimer())
    assert docs(failed) == docs(plain)
    assert any(n.startswith("query rewriting (hyde) failed") for n in failed.notes)


async def test_no_rewrite_near_the_deadline_or_without_an_llm(setup: Setup) -> None:
    near = question(Rewrite.MULTI_QUERY, deadline=time.monotonic() + 0.5)
    skipped = await setup.engine(min_seconds=2.0).retrieve(near, StageTimer())
    assert setup.chat_prompts() == []
    assert any("skipped" in n and "before the deadline" in n for n in skipped.notes)
    offline = await setup.engine(llm=False).retrieve(question(Rewrite.HYDE), StageTimer())
    assert "query rewriting (hyde) skipped: no LLM configured" in offline.notes


def test_sub_queries_are_read_from_json_or_lines_without_repeats() -> None:
    assert parse_sub_queries('["a b", "c d", "a b", ""]', 3, "q") == ("a b", "c d")
    assert parse_sub_queries('Sure! ["one", "two", "three",]', 2, "q") == ("one", "two")
    assert parse_sub_queries("1. first query\n2. second query\n", 5, "q") == (
        "first query",
        "second query",
    )
    assert parse_sub_queries('["The Question?"]', 3, "the question?") == ()
