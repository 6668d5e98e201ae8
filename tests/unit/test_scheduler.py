"""The embedding scheduler: batching, limits, priority, withdrawal, failures and shutdown.

Most tests wrap the real HashEmbedder in `Recording`, which logs every provider call and can
hold calls open (a gate) so that a backlog builds up deterministically, without sleeps.
A few run the real OpenAIEmbedder against the OpenAI-compatible test server.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragstream.common.config import EmbeddingConfig
from ragstream.common.providers import ProviderError
from ragstream.common.providers.batch_plan import counted_bytes, plan_batch, token_bounds
from ragstream.common.providers.embedding import Embedder, HashEmbedder, Matrix, OpenAIEmbedder
from ragstream.common.providers.scheduler import (
    INLINE_COUNT_BYTES,
    EmbeddingScheduler,
    Priority,
    SchedulerClosedError,
)
from ragstream.common.text.tokens import count_tokens
from ragstream.testing.openai_server import OpenAITestServer

DIMENSIONS = 16


class Recording:
    """A HashEmbedder whose calls are logged and, while `gate` is clear, held open."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(DIMENSIONS)
        self.name = self.inner.name
        self.dimensions = self.inner.dimensions
        self.languages = self.inner.languages
        self.calls: list[list[str]] = []
        self.gate = asyncio.Event()
        self.gate.set()
        self.closed = False
        self._changed = asyncio.Condition()

    async def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append(list(texts))
        async with self._changed:
            self._changed.notify_all()
        await self.gate.wait()
        return await self.inner.embed(texts)

    async def close(self) -> None:
        self.closed = True

    async def wait_calls(self, count: int) -> None:
        async with asyncio.timeout(5), self._changed:
            await self._changed.wait_for(lambda: len(self.calls) >= count)


def config(**overrides: Any) -> EmbeddingConfig:
    values: dict[str, Any] = {"provider": "hash", "batch_window_ms": 0, "concurrency": 1}
    return EmbeddingConfig.model_validate(values | overrides)


def words(text: str) -> int:
    return len(text.split())


def texts(prefix: str, count: int) -> list[str]:
    return [f"{prefix} text number {index}" for index in range(count)]


async def started(coro: Any) -> asyncio.Task[Matrix]:
    """A task for `coro`, run until its request is queued (embed queues before it awaits,
    unless its texts are counted on a worker thread: INLINE_COUNT_BYTES)."""
    task: asyncio.Task[Matrix] = asyncio.create_task(coro)
    await asyncio.sleep(0)
    return task


@pytest.fixture
async def recording() -> Recording:
    return Recording()


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(dimensions=DIMENSIONS) as running:
        yield running


def openai_embedder(server: OpenAITestServer, cfg: EmbeddingConfig) -> OpenAIEmbedder:
    values = cfg.model_dump() | {
        "provider": "openai",
        "model": "test-embedding",
        "base_url": server.base_url,
        "api_key": "test",
        "max_retries": 0,
    }
    return OpenAIEmbedder(EmbeddingConfig.model_validate(values))


def test_plan_batch_takes_in_order_and_stops_at_the_first_misfit() -> None:
    assert plan_batch([[1, 1], [1], [1, 1, 1]], max_texts=4, max_tokens=100) == [2, 1, 1]
    assert plan_batch([[1, 1], [1]], max_texts=4, max_tokens=100) == [2, 1]
    # The 5-token text does not fit after 4 tokens; the 1-token text behind it waits too.
    assert plan_batch([[2, 2], [5], [1]], max_texts=10, max_tokens=6) == [2, 0]
    assert plan_batch([[2, 2, 5, 1]], max_texts=10, max_tokens=6) == [2]
    # An oversized text still goes out, alone.
    assert plan_batch([[50], [1]], max_texts=10, max_tokens=6) == [1, 0]
    assert plan_batch([], max_texts=10, max_tokens=6) == []


def test_token_bounds_count_only_the_texts_that_can_reach_the_limit() -> None:
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return 7

    short, han, long = "a short text", "汉字", "x" * 600
    assert token_bounds([short, han, long], count, short=500) == [len(short), 6, 7]
    assert counted == [long]
    assert counted_bytes([short, han, long], short=500) == 600
    assert counted_bytes([short, han], short=500) == 0


@given(st.text(max_size=200))
def test_a_token_bound_is_never_below_the_exact_count(text: str) -> None:
    (bound,) = token_bounds([text], count_tokens, short=1_000)
    assert bound >= count_tokens(text)


async def test_concurrent_requests_share_one_call_with_unbatched_results(
    recording: Recording,
) -> None:
    requests = [texts(f"query {index}", 3) for index in range(10)]
    async with EmbeddingScheduler(recording, config(batch_window_ms=20)) as scheduler:
        results = await asyncio.gather(*(scheduler.embed(request) for request in requests))
    assert recording.calls == [[text for request in requests for text in request]]
    for request, result in zip(requests, results, strict=True):
        np.testing.assert_array_equal(result, await HashEmbedder(DIMENSIONS).embed(request))
    assert recording.closed


async def test_a_lone_request_goes_at_once_and_those_behind_its_call_wait_together(
    recording: Recording,
) -> None:
    recording.gate.clear()
    loop = asyncio.get_running_loop()
    cfg = config(batch_window_ms=1000, batch_size=32, concurrency=4)
    async with EmbeddingScheduler(recording, cfg) as s:
        start = loop.time()
        lone = await started(s.embed(["alone"]))
        await recording.wait_calls(1)
        assert loop.time() - start < 0.5  # not the second's window
        # A call is out: the next requests wait for the window (or a full batch) together.
        followers = [await started(s.embed([f"next {i}"])) for i in range(3)]
        await asyncio.sleep(0.05)
        assert recording.calls == [["alone"]]
        full = await started(s.embed(texts("fill", 29)))  # a full batch goes, window or not
        await recording.wait_calls(2)
        assert loop.time() - start < 0.5
        recording.gate.set()
        await asyncio.gather(lone, *followers, full)
    assert recording.calls[1] == ["next 0", "next 1", "next 2", *texts("fill", 29)]
    assert len(recording.calls) == 2


async def test_a_partial_batch_waits_for_the_call_out_unless_it_fills(
    recording: Recording,
) -> None:
    recording.gate.clear()
    # Free call slots and no window: only the call out holds the followers back.
    cfg = config(batch_window_ms=0, batch_size=8, concurrency=4)
    async with EmbeddingScheduler(recording, cfg) as s:
        view = s.view(Priority.QUERY)
        lone = await started(view.embed(["alone"]))
        await recording.wait_calls(1)
        followers = [await started(view.embed([f"next {i}"])) for i in range(3)]
        await asyncio.sleep(0.05)
        assert recording.calls == [["alone"]]
        recording.gate.set()  # the call comes back: the followers go together
        await asyncio.gather(lone, *followers)
        assert recording.calls[1] == ["next 0", "next 1", "next 2"]
        recording.gate.clear()
        out = await started(view.embed(["alone again"]))
        await recording.wait_calls(3)
        full = await started(view.embed(texts("fill", 8)))  # a full batch does not wait
        await recording.wait_calls(4)
        recording.gate.set()
        await asyncio.gather(out, full)
    assert recording.calls[3] == texts("fill", 8)


async def test_a_call_out_much_longer_than_the_round_trip_holds_nothing_back(
    recording: Recording,
) -> None:
    cfg = config(batch_window_ms=0, batch_size=8, concurrency=2)
    loop = asyncio.get_running_loop()
    async with EmbeddingScheduler(recording, cfg) as s:
        view = s.view(Priority.QUERY)
        await view.embed(["quick"])  # answered at once: the round trip is a moment
        recording.gate.clear()  # the provider hangs from now on
        hung = await started(view.embed(["hung"]))
        await recording.wait_calls(2)
        start = loop.time()
        follower = await started(view.embed(["next"]))
        await recording.wait_calls(3)  # on the free slot, though the hung call is out
        assert loop.time() - start < 0.4  # not the assumed round trip of a new scheduler
        recording.gate.set()
        await asyncio.gather(hung, follower)
    assert recording.calls == [["quick"], ["hung"], ["next"]]


async def test_a_query_is_not_held_back_by_an_indexing_call(recording: Recording) -> None:
    recording.gate.clear()
    cfg = config(batch_window_ms=0, batch_size=8, concurrency=2)
    async with EmbeddingScheduler(recording, cfg) as s:
        indexing = await started(s.embed(texts("doc", 3)))
        await recording.wait_calls(1)
        more = await started(s.embed(texts("doc b", 2)))  # held behind the indexing call
        query = await started(s.view(Priority.QUERY).embed(["the question"]))
        await recording.wait_calls(2)
        assert recording.calls[1] == ["the question", *texts("doc b", 2)]
        recording.gate.set()
        await asyncio.gather(indexing, more, query)


async def test_batch_size_limit_splits_a_large_request_and_keeps_row_order(
    recording: Recording,
) -> None:
    small, large = texts("small", 2), texts("large", 9)
    async with EmbeddingScheduler(recording, config(batch_size=4)) as scheduler:
        first, second = await asyncio.gather(scheduler.embed(small), scheduler.embed(large))
    assert [len(call) for call in recording.calls] == [4, 4, 3]
    assert [text for call in recording.calls for text in call] == small + large
    expected = await HashEmbedder(DIMENSIONS).embed(large)
    np.testing.assert_array_equal(second, expected)
    assert first.shape == (2, DIMENSIONS)


async def test_token_limit_is_respected_and_an_oversized_text_goes_alone(
    recording: Recording,
) -> None:
    requests = [["one two three"], ["four five"], ["six seven eight nine ten eleven"], ["x"]]
    cfg = config(batch_size=100, batch_tokens=64)
    async with EmbeddingScheduler(recording, cfg, count=lambda text: 16 * words(text)) as sched:
        await asyncio.gather(*(sched.embed(request) for request in requests))
    token_counts = [sum(16 * words(text) for text in call) for call in recording.calls]
    assert recording.calls == [["one two three"], ["four five"], [requests[2][0]], ["x"]]
    assert token_counts == [48, 32, 96, 16]


async def test_a_query_jumps_the_indexing_backlog(recording: Recording) -> None:
    recording.gate.clear()
    async with EmbeddingScheduler(recording, config(batch_size=4)) as scheduler:
        first = await started(scheduler.embed(texts("doc a", 4)))
        await recording.wait_calls(1)
        backlog = await started(scheduler.embed(texts("doc b", 4)))
        merge = await started(scheduler.embed(["entity c"], priority=Priority.MERGE))
        query = await started(scheduler.view(Priority.QUERY).embed(["the question", "kw"]))
        recording.gate.set()
        await asyncio.gather(first, backlog, merge, query)
    assert recording.calls[1] == ["the question", "kw", "entity c", "doc b text number 0"]
    assert recording.calls[2] == texts("doc b", 4)[1:]


async def test_a_withdrawn_request_is_never_sent(recording: Recording) -> None:
    recording.gate.clear()
    # batch_size 2: a withdrawn request left in the queue would also take room from the others.
    async with EmbeddingScheduler(recording, config(batch_size=2)) as scheduler:
        first = await started(scheduler.embed(["in flight"]))
        await recording.wait_calls(1)
        withdrawn = await started(scheduler.embed(["client went away"]))
        kept = [await started(scheduler.embed([text])) for text in ("wanted", "also wanted")]
        withdrawn.cancel()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.01):
                await scheduler.embed(["deadline passed"])
        recording.gate.set()
        await asyncio.gather(first, *kept)
        with pytest.raises(asyncio.CancelledError):
            await withdrawn
    assert recording.calls == [["in flight"], ["wanted", "also wanted"]]


async def test_a_request_withdrawn_after_sending_leaves_the_batch_intact(
    recording: Recording,
) -> None:
    recording.gate.clear()
    async with EmbeddingScheduler(recording, config()) as scheduler:
        # Both queued before the owner task runs, so they share the first call.
        withdrawn = asyncio.create_task(scheduler.embed(["client went away"]))
        kept = asyncio.create_task(scheduler.embed(["still wanted"]))
        await recording.wait_calls(1)
        withdrawn.cancel()
        recording.gate.set()
        assert (await kept).shape == (1, DIMENSIONS)
        assert (await scheduler.embed(["next"])).shape == (1, DIMENSIONS)
    assert recording.calls == [["client went away", "still wanted"], ["next"]]


async def test_a_batch_whose_requests_all_went_away_makes_no_call(recording: Recording) -> None:
    recording.gate.clear()
    async with EmbeddingScheduler(recording, config()) as scheduler:
        first = await started(scheduler.embed(["in flight"]))
        await recording.wait_calls(1)
        gone = [await started(scheduler.embed([f"gone {index}"])) for index in range(3)]
        for task in gone:
            task.cancel()
        recording.gate.set()
        await first
        # The slot freed by the first call found nothing to send; the next request is next.
        await scheduler.embed(["later"])
    assert recording.calls == [["in flight"], ["later"]]


async def test_a_provider_failure_reaches_every_request_of_that_batch(
    server: OpenAITestServer,
) -> None:
    cfg = config(concurrency=2)
    server.fail_next("embeddings", status=500)
    async with EmbeddingScheduler(openai_embedder(server, cfg), cfg) as scheduler:
        outcomes = await asyncio.gather(
            scheduler.embed(["a"]), scheduler.embed(["b", "c"]), return_exceptions=True
        )
        assert all(isinstance(outcome, ProviderError) for outcome in outcomes)
        after = await scheduler.embed(["a"])
    assert after.shape == (1, DIMENSIONS)
    assert server.log.received["embeddings"] == 2
    assert server.log.failed["embeddings"] == 1


async def test_failure_of_one_piece_fails_the_whole_split_request(
    server: OpenAITestServer,
) -> None:
    cfg = config(batch_size=2)
    server.fail_next("embeddings", status=500)
    async with EmbeddingScheduler(openai_embedder(server, cfg), cfg) as scheduler:
        with pytest.raises(ProviderError):
            await scheduler.embed(texts("split", 6))
        # The failed request's remaining pieces are dropped, not sent.
        await scheduler.embed(["next"])
    assert server.log.embedding_batch_sizes == [1]
    assert server.log.received["embeddings"] == 2


async def test_batches_against_the_openai_server_respect_concurrency(
    server: OpenAITestServer,
) -> None:
    cfg = config(batch_size=32, concurrency=2, batch_window_ms=5)
    server.set_latency("embeddings", 0.05)
    requests = [[f"what is topic {index}", f"topic {index}", "overview"] for index in range(16)]
    async with EmbeddingScheduler(openai_embedder(server, cfg), cfg) as scheduler:
        view = scheduler.view(Priority.QUERY)
        results = await asyncio.gather(*(view.embed(request) for request in requests))
    assert sorted(server.log.embedding_batch_sizes) == [16, 32]
    assert server.log.peak_in_flight["embeddings"] <= 2
    for request, result in zip(requests, results, strict=True):
        expected = await HashEmbedder(DIMENSIONS).embed(request)
        np.testing.assert_allclose(result, expected, atol=1e-6)


async def test_close_fails_queued_and_in_flight_requests(recording: Recording) -> None:
    recording.gate.clear()
    scheduler = EmbeddingScheduler(recording, config())
    in_flight = await started(scheduler.embed(["in flight"]))
    await recording.wait_calls(1)
    queued = await started(scheduler.embed(["queued"]))
    await scheduler.close()
    for task in (in_flight, queued):
        with pytest.raises(SchedulerClosedError):
            await task
    assert recording.calls == [["in flight"]]
    assert recording.closed
    with pytest.raises(SchedulerClosedError):
        await scheduler.embed(["too late"])
    await scheduler.close()


async def test_close_before_the_owner_task_ran_fails_the_queued_request(
    recording: Recording,
) -> None:
    scheduler = EmbeddingScheduler(recording, config())
    queued = await started(scheduler.embed(["queued"]))
    await scheduler.close()
    with pytest.raises(SchedulerClosedError):
        await queued
    assert recording.calls == []


async def test_a_large_request_is_counted_beside_the_event_loop(recording: Recording) -> None:
    threads: dict[str, int] = {}

    def count(text: str) -> int:
        threads[text[0]] = threading.get_ident()
        return len(text) // 4

    large, small = "x" * (INLINE_COUNT_BYTES + 1), "y" * 600
    async with EmbeddingScheduler(recording, config(), count=count) as scheduler:
        assert len(await scheduler.embed([large])) == 1
        assert len(await scheduler.embed([small])) == 1
    loop_thread = threading.get_ident()
    assert threads["x"] != loop_thread
    assert threads["y"] == loop_thread
    assert recording.calls == [[large], [small]]


async def test_a_scheduler_closed_while_counting_refuses_the_request(
    recording: Recording,
) -> None:
    counting, release = threading.Event(), threading.Event()

    def count(text: str) -> int:
        counting.set()
        release.wait(5)
        return 1

    scheduler = EmbeddingScheduler(recording, config(), count=count)
    request = asyncio.create_task(scheduler.embed(["x" * (INLINE_COUNT_BYTES + 1)]))
    assert await asyncio.to_thread(counting.wait, 5)
    await scheduler.close()
    release.set()
    with pytest.raises(SchedulerClosedError):
        async with asyncio.timeout(5):  # queued in a closed scheduler, it would wait forever
            await request
    assert recording.calls == []


async def test_views_share_the_scheduler_and_do_not_close_it(recording: Recording) -> None:
    async with EmbeddingScheduler(recording, config()) as scheduler:
        view: Embedder = scheduler.view(Priority.QUERY)
        assert (view.name, view.dimensions) == (recording.name, DIMENSIONS)
        await view.close()
        assert (await view.embed(["still open"])).shape == (1, DIMENSIONS)
        assert (await scheduler.embed([])).shape == (0, DIMENSIONS)
    assert recording.calls == [["still open"]]
    assert recording.closed


def test_queries_come_before_merges_before_indexing() -> None:
    assert Priority.QUERY < Priority.MERGE < Priority.INDEXING
