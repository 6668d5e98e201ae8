"""The settle wait before a community batch: bounded by the backlog, and by the share of the
time the previous batch took while the stages before it stay busy."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from ragstream.indexer.backlog import poll_pause, settling, wait_limit


def test_the_wait_after_a_long_batch_keeps_batches_to_their_share() -> None:
    assert wait_limit(30.0, 0.0, 0.25) == 30.0
    assert wait_limit(30.0, 20.0, 0.25) == 60.0
    assert wait_limit(30.0, 20.0, 1.0) == 30.0  # the bound off


def test_a_slow_read_of_the_offsets_is_repeated_less_often() -> None:
    assert poll_pause(0.001) == 0.05  # the embedded bus: one small query
    assert poll_pause(0.1) == pytest.approx(
        0.4
    )  # a read of 0.1 s takes a fifth of the wait at most
    assert poll_pause(0.1) > poll_pause(0.05) > poll_pause(0.01)


async def _timed(settle: Callable[[asyncio.Event], Awaitable[None]]) -> float:
    loop = asyncio.get_running_loop()
    start = loop.time()
    await settle(asyncio.Event())
    return loop.time() - start


async def test_a_busy_backlog_is_waited_for_longer_after_a_long_batch() -> None:
    async def busy() -> bool:
        return False

    settle = settling(busy, 0.05, "test backlog", share=0.25)
    first = await _timed(settle)
    await asyncio.sleep(0.3)  # the batch the consumer runs between two waits
    second = await _timed(settle)
    assert first < 0.3
    assert second >= 0.8  # three times the batch: it may take a quarter of the time


async def test_a_drained_backlog_is_not_waited_for_whatever_the_last_batch_took() -> None:
    async def drained() -> bool:
        return True

    settle = settling(drained, 5.0, "test backlog", share=0.25)
    await _timed(settle)
    await asyncio.sleep(0.3)
    assert await _timed(settle) < 0.25
