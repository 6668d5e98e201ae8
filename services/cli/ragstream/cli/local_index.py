"""Indexes a corpus in-process on the embedded backends, through the real pipeline:
events on the embedded bus, both indexing stages, until everything is committed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable

from ragstream.common.bus.progress import indexing_progress
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange, encode
from ragstream.common.registry import Backends, open_backends
from ragstream.indexer.main import run_stages

PUBLISH_BATCH = 256


@contextlib.asynccontextmanager
async def running_indexer(settings: Settings) -> AsyncIterator[Backends]:
    """The backends, with both indexing stages running until the block exits; entered once
    the stages consume (their text tools loaded)."""
    async with open_backends(settings) as backends:
        stop, ready = asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(run_stages(settings, backends, stop, ready))
        try:
            await until_ready(ready, task)
            yield backends
        finally:
            stop.set()
            await asyncio.wait_for(task, 120)


async def until_ready(ready: asyncio.Event, task: asyncio.Task[None]) -> None:
    """Waits for `ready`; raises the error of `task` if it ends first."""
    waiting = asyncio.ensure_future(ready.wait())
    try:
        await asyncio.wait({waiting, task}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiting.cancel()
    if task.done():
        task.result()


async def publish(backends: Backends, changes: Iterable[DocumentChange]) -> int:
    batch, total = [], 0
    for change in changes:
        batch.append(encode(change))
        if len(batch) == PUBLISH_BATCH:
            await backends.bus.publisher.publish(backends.topics.documents, batch)
            total, batch = total + len(batch), []
    if batch:
        await backends.bus.publisher.publish(backends.topics.documents, batch)
    return total + len(batch)


async def wait_current(settings: Settings, backends: Backends, poll_s: float = 0.2) -> None:
    """Returns once both stages have committed everything published so far."""
    # Polls: the progress is committed offsets in the bus, which signals no event.
    group = settings.bus.group_id
    while not (await indexing_progress(backends.bus, backends.topics, group)).current:  # noqa: ASYNC110
        await asyncio.sleep(poll_s)
