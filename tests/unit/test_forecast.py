"""Announced embedding requests (providers/forecast.py) and how the scheduler waits for them:
a partial batch waits for a near announced request, not for one waiting on a remote model,
not after the announcement is withdrawn, and not beyond a few round trips."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from ragstream.common.config import EmbeddingConfig
from ragstream.common.providers.embedding import HashEmbedder, Matrix
from ragstream.common.providers.forecast import Forecast, far
from ragstream.common.providers.scheduler import EmbeddingScheduler, Priority
from tests.unit.test_scheduler import DIMENSIONS, Recording


@pytest.fixture
async def recording() -> Recording:
    return Recording()


def config(**overrides: Any) -> EmbeddingConfig:
    values: dict[str, Any] = {"provider": "hash", "batch_window_ms": 0, "batch_size": 8}
    return EmbeddingConfig.model_validate(values | {"concurrency": 4} | overrides)


def test_an_announcement_is_near_until_it_arrives_or_its_block_ends() -> None:
    changes: list[int] = []
    forecast = Forecast(lambda: changes.append(1))
    with forecast.coming(Priority.MERGE):
        assert forecast.any_near(Priority.MERGE)
        assert forecast.any_near(Priority.INDEXING)
        assert not forecast.any_near(Priority.QUERY)  # a merge does not hold a query back
        forecast.arrived()
        assert not forecast.any_near(Priority.INDEXING)
        assert changes == [1]
        forecast.arrived()  # a second request of the block was not announced
    assert changes == [1]
    with forecast.coming(Priority.QUERY):
        assert forecast.any_near(Priority.QUERY)
    assert not forecast.any_near(Priority.INDEXING)  # withdrawn without arriving
    assert changes == [1, 1]


def test_a_remote_wait_makes_the_request_far_for_its_duration() -> None:
    forecast = Forecast(lambda: None)
    with forecast.coming(Priority.QUERY):
        with far():
            assert not forecast.any_near(Priority.QUERY)
            with far():  # overlapping waits of one call
                assert not forecast.any_near(Priority.QUERY)
            assert not forecast.any_near(Priority.QUERY)
        assert forecast.any_near(Priority.QUERY)
        with far():
            forecast.arrived()  # arrived while away: gone for good
        assert not forecast.any_near(Priority.QUERY)
    with far():  # no announcement: nothing to do
        assert not forecast.any_near(Priority.QUERY)


def test_another_forecasts_announcement_is_left_alone() -> None:
    first, second = Forecast(lambda: None), Forecast(lambda: None)
    with first.coming(Priority.QUERY):
        second.arrived()
        assert first.any_near(Priority.QUERY)


async def announced(
    scheduler: EmbeddingScheduler,
    text: str,
    go: asyncio.Event,
    remote: asyncio.Event | None = None,
) -> Matrix | None:
    """A query as the gate runs it: announced from the start; it waits for `go` (its CPU
    turn), or on a remote model while `remote` is clear, then embeds `text` ("" for none)."""
    with scheduler.forecast.coming(Priority.QUERY):
        if remote is not None:
            with far():
                await remote.wait()
        await go.wait()
        if not text:
            return None
        return await scheduler.view(Priority.QUERY).embed([text])


async def test_a_partial_batch_waits_for_an_announced_query_that_is_near(
    recording: Recording,
) -> None:
    async with EmbeddingScheduler(recording, config()) as s:
        now = asyncio.Event()
        now.set()
        late = asyncio.Event()
        second = asyncio.create_task(announced(s, "second", late))
        await asyncio.sleep(0)  # received first, still before its embedding
        first = asyncio.create_task(announced(s, "first", now))
        await asyncio.sleep(0.1)
        assert recording.calls == []  # the first waits for the second, though idle
        late.set()
        rows = await asyncio.gather(first, second)
    assert recording.calls == [["first", "second"]]
    expected = await HashEmbedder(DIMENSIONS).embed(["first"])
    np.testing.assert_array_equal(rows[0], expected)


async def test_nothing_waits_for_a_query_waiting_on_a_remote_model(recording: Recording) -> None:
    async with EmbeddingScheduler(recording, config()) as s:
        go, keywords = asyncio.Event(), asyncio.Event()
        go.set()
        away = asyncio.create_task(announced(s, "away", go, remote=keywords))
        await asyncio.sleep(0)
        await asyncio.wait_for(announced(s, "first", go), 0.5)
        assert recording.calls == [["first"]]
        keywords.set()
        await away
    assert recording.calls == [["first"], ["away"]]


async def test_a_request_of_no_texts_takes_its_announcement_off(recording: Recording) -> None:
    async with EmbeddingScheduler(recording, config()) as s:
        with s.forecast.coming(Priority.QUERY):
            assert s.forecast.any_near(Priority.QUERY)
            assert len(await s.embed([])) == 0
            assert not s.forecast.any_near(Priority.QUERY)
    assert recording.calls == []


async def test_a_withdrawn_announcement_ends_the_wait(recording: Recording) -> None:
    async with EmbeddingScheduler(recording, config()) as s:
        now, later = asyncio.Event(), asyncio.Event()
        now.set()
        nothing = asyncio.create_task(announced(s, "", later))  # e.g. answered from a cache
        await asyncio.sleep(0)
        first = asyncio.create_task(announced(s, "first", now))
        await asyncio.sleep(0.05)
        assert recording.calls == []
        later.set()
        await asyncio.wait_for(asyncio.gather(first, nothing), 0.5)
    assert recording.calls == [["first"]]


async def test_an_announced_query_that_never_comes_holds_a_batch_a_few_round_trips(
    recording: Recording,
) -> None:
    loop = asyncio.get_running_loop()
    async with EmbeddingScheduler(recording, config()) as s:
        await s.embed(["warm"])  # answered at once: the round trip is a moment
        now, never = asyncio.Event(), asyncio.Event()
        now.set()
        stuck = asyncio.create_task(announced(s, "stuck", never))
        await asyncio.sleep(0)
        start = loop.time()
        await asyncio.wait_for(announced(s, "first", now), 1.0)
        assert loop.time() - start < 0.5  # not four times a new scheduler's assumed 0.5 s
        stuck.cancel()
    assert recording.calls == [["warm"], ["first"]]
