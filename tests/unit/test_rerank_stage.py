"""The query's rerank stage with the real HTTP reranker against the rerank test server."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest

from ragstream.common.config_rerank import RerankConfig
from ragstream.common.providers.rerank import HttpReranker
from ragstream.query.reranking import SKIPPED_NOTE, LoadSignal, RerankGauge
from ragstream.query.stages.rerank import RerankOutcome, rerank_chunks
from ragstream.query.types import ContextChunk, Mode, QueryOptions
from ragstream.testing.rerank_server import RerankTestServer

QUERY = "vitamin D and bone fractures"
RELEVANT = "Vitamin D deficiency raises the risk of bone fractures in older adults."
NO_LOAD = LoadSignal()


def options(**overrides: Any) -> QueryOptions:
    defaults = QueryOptions(
        mode=Mode.NAIVE,
        top_k=40,
        chunk_top_k=20,
        max_entity_tokens=6000,
        max_relation_tokens=8000,
        max_total_tokens=30000,
        related_chunk_number=5,
        chunk_pick_method="VECTOR",
        cosine_threshold=0.2,
        enable_rerank=True,
        min_rerank_score=0.0,
        only_need_context=True,
        only_need_prompt=False,
        response_type="Multiple Paragraphs",
    )
    return dataclasses.replace(defaults, **overrides)


def chunks(count: int, relevant_at: int | None = None) -> list[ContextChunk]:
    """`count` chunks in retrieval order; only the one at `relevant_at` is about the query."""
    return [
        ContextChunk(
            chunk_id=f"c{i}",
            doc_id=f"d{i}",
            file_path="",
            content=RELEVANT if i == relevant_at else f"Pasta recipe {i} with fresh tomatoes.",
            score=1.0 / (i + 1),
            tokens=12,
        )
        for i in range(count)
    ]


def ids(outcome: RerankOutcome) -> list[str]:
    return [chunk.chunk_id for chunk in outcome.chunks]


@pytest.fixture
async def server() -> AsyncIterator[RerankTestServer]:
    async with RerankTestServer() as running:
        yield running


@pytest.fixture
async def cfg(server: RerankTestServer) -> RerankConfig:
    return RerankConfig.model_validate(
        {"provider": "jina", "model": "m", "base_url": server.url("jina"), "backoff_s": 0.001}
    )


@pytest.fixture
async def reranker(cfg: RerankConfig) -> AsyncIterator[HttpReranker]:
    client = HttpReranker(cfg)
    yield client
    await client.close()


async def test_no_reranker_skips_the_step_and_says_so(cfg: RerankConfig) -> None:
    outcome = await rerank_chunks(None, QUERY, chunks(30), options(chunk_top_k=5), NO_LOAD, cfg)
    assert ids(outcome) == ["c0", "c1", "c2", "c3", "c4"]
    assert outcome.note == SKIPPED_NOTE


async def test_reranking_disabled_by_the_request_sends_nothing(
    server: RerankTestServer, reranker: HttpReranker, cfg: RerankConfig
) -> None:
    opts = options(enable_rerank=False, chunk_top_k=3)
    outcome = await rerank_chunks(reranker, QUERY, chunks(5, relevant_at=4), opts, NO_LOAD, cfg)
    assert ids(outcome) == ["c0", "c1", "c2"]
    assert outcome.note is None
    assert server.log.total == 0


async def test_the_relevant_chunk_moves_to_the_top_with_its_rerank_score(
    reranker: HttpReranker, cfg: RerankConfig
) -> None:
    outcome = await rerank_chunks(
        reranker, QUERY, chunks(8, relevant_at=6), options(chunk_top_k=4), NO_LOAD, cfg
    )
    assert ids(outcome)[0] == "c6"
    assert len(outcome.chunks) == 4
    assert outcome.note is None
    assert outcome.chunks[0].score > 0 == outcome.chunks[1].score
    assert ids(outcome)[1:] == ["c0", "c1", "c2"]  # ties keep retrieval order


async def test_min_rerank_score_and_top_n_cut_the_list(
    reranker: HttpReranker, cfg: RerankConfig
) -> None:
    opts = options(min_rerank_score=0.01)
    outcome = await rerank_chunks(reranker, QUERY, chunks(8, relevant_at=6), opts, NO_LOAD, cfg)
    assert ids(outcome) == ["c6"]
    capped = cfg.model_copy(update={"top_n": 2})
    outcome = await rerank_chunks(reranker, QUERY, chunks(8), options(), NO_LOAD, capped)
    assert len(outcome.chunks) == 2


async def test_a_failing_reranker_keeps_the_original_order(
    server: RerankTestServer, reranker: HttpReranker, cfg: RerankConfig
) -> None:
    server.fail_next(3, status=503)
    outcome = await rerank_chunks(
        reranker, QUERY, chunks(6, relevant_at=5), options(chunk_top_k=4), NO_LOAD, cfg
    )
    assert ids(outcome) == ["c0", "c1", "c2", "c3"]
    assert outcome.note is not None
    assert outcome.note.startswith("rerank failed: reranker jina:m at ")
    assert outcome.note.endswith(
        'HTTP 503: {"detail": "injected failure"} (after 3 attempts); original order kept'
    )
    assert server.log.total == 3


async def test_degradation_under_a_saturated_queue(
    server: RerankTestServer, cfg: RerankConfig
) -> None:
    server.set_latency(0.2)
    cfg = cfg.model_copy(update={"degrade_queue_depth": 2, "cache_size": 0})
    gauge = RerankGauge()
    reranker = HttpReranker(cfg)

    async def one(query_number: int) -> RerankOutcome:
        with gauge.track() as load:
            query = f"{QUERY} query{query_number}"
            return await rerank_chunks(reranker, query, chunks(30, 25), options(), load, cfg)

    try:
        outcomes = await asyncio.gather(*(one(n) for n in range(5)))
    finally:
        await reranker.close()
    notes = [outcome.note for outcome in outcomes]
    degraded_note = "rerank degraded: only the top 20 reranked (load)"
    assert notes == [None, None, None, degraded_note, degraded_note]
    assert sorted(len(body["documents"]) for body in server.log.bodies) == [20, 20, 30, 30, 30]
    assert gauge.in_flight == 0
    # Degraded: chunk 25, the relevant one, was not reranked, so it does not rise to the top.
    assert [ids(o)[0] for o in outcomes] == ["c25", "c25", "c25", "c0", "c0"]
    assert [len(o.chunks) for o in outcomes] == [20] * 5


async def test_degradation_when_the_deadline_is_near(
    server: RerankTestServer, reranker: HttpReranker, cfg: RerankConfig
) -> None:
    near = LoadSignal(seconds_left=0.5)
    outcome = await rerank_chunks(reranker, QUERY, chunks(30), options(), near, cfg)
    assert outcome.note == "rerank degraded: only the top 20 reranked (load)"
    assert len(server.log.bodies[0]["documents"]) == 20
    few = await rerank_chunks(reranker, QUERY, chunks(10), options(), near, cfg)
    assert few.note is None  # nothing was left out


async def test_the_deadline_bounds_the_rerank(
    server: RerankTestServer, reranker: HttpReranker, cfg: RerankConfig
) -> None:
    server.set_latency(2.0)
    load = LoadSignal(seconds_left=0.2)
    outcome = await asyncio.wait_for(
        rerank_chunks(reranker, QUERY, chunks(5, 4), options(), load, cfg), timeout=1.0
    )
    assert ids(outcome) == ["c0", "c1", "c2", "c3", "c4"]
    assert outcome.note == (
        "rerank failed: no answer within the 0.20 s left before the deadline; original order kept"
    )
