"""The settle wait before a community batch: bounded by the backlog, and by the share of the
time the previous batch took while the stages before it stay busy."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from ragstream.indexer.backlog import settling, wait_limit


def test_the_wait_after_a_long_batch_keeps_batches_to_their_share() -> None:
    assert wait_limit(30.0, 0.0, 0.25) == 30.0
    assert wait_limit(30.0, 20.0, 0.25) == 60.0
    assert wait_limit(30.0, 20.0, 1.0) == 30.0  # the bound off


async def _timed(settle: Callable[[asyncio.Event], Awaitable[None]]) -> float:
    loop = asyncio.get_running_loop()
    start = loop.time()
    await settle(asyncio.Event())
    return loop.time() - start


async def test_a_busy_backlog_is_waited_for_longer_after_a_long_batch() -> None:
    async def busy() -> bool:
        return False

    settle = settling(busy, 0.05, "test backlog", 0.05, share=0.25)
    first = await _timed(settle)
    await asyncio.sleep(0.3)  # the batch the consumer runs between two waits
    second = await _timed(settle)
    assert first < 0.3
    assert second >= 0.8  # three times the batch: it may take a quarter of the time


async def test_a_drained_backlog_is_not_waited_for_whatever_the_last_batch_took() -> None:
    async def drained() -> bool:
        return True

    settle = settling(drained, 5.0, "test backlog", 0.05, share=0.25)
    await _timed(settle)
    await asyncio.sleep(0.3)
    assert await _timed(settle) < 0.25


async def test_the_backlog_is_read_again_after_the_buses_poll_interval() -> None:
    loop = asyncio.get_running_loop()

    def drains_after(seconds: float) -> Callable[[], Awaitable[bool]]:
        until = loop.time() + seconds

        async def drained() -> bool:
            return loop.time() >= until

        return drained

    # Drained 0.1 s in: a bus read every 50 ms (the embedded one) goes on at the next read,
    # one read every second only after a second.
    assert await _timed(settling(drains_after(0.1), 5.0, "test backlog", 0.05)) < 0.5
    assert await _timed(settling(drains_after(0.1), 5.0, "test backlog", 1.0)) >= 1.0
