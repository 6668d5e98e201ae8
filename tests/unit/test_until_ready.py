"""running_indexer's wait for the stages: ready, or the error that stopped them first."""

from __future__ import annotations

import asyncio

import pytest

from ragstream.cli.local_index import until_ready


async def test_returns_once_ready_while_the_task_runs_on() -> None:
    ready, stop = asyncio.Event(), asyncio.Event()

    async def stages() -> None:
        await asyncio.sleep(0.01)
        ready.set()
        await stop.wait()

    task = asyncio.create_task(stages())
    await asyncio.wait_for(until_ready(ready, task), 2)
    assert not task.done()
    stop.set()
    await task


async def test_raises_the_error_of_a_task_that_ends_before_ready() -> None:
    async def stages() -> None:
        raise RuntimeError("the store is locked")

    task = asyncio.create_task(stages())
    with pytest.raises(RuntimeError, match="the store is locked"):
        await asyncio.wait_for(until_ready(asyncio.Event(), task), 2)
