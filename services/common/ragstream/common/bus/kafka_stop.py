"""Stopping an aiokafka consumer to the end.

aiokafka 0.14's `Fetcher.close` cancels its fetch tasks and awaits each one unguarded. A
task cancelled while it pauses before retrying a failed fetch (the broker dropped the
connection, or refuses the login) raises CancelledError out of `AIOKafkaConsumer.stop()`
though nothing cancelled the caller (aio-libs/aiokafka#647, #983), and the rest of the
close never runs: the other fetch tasks and the client's connections stay open.
`stop_consumer` finishes that close, and lets a cancellation of the caller through.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

log = logging.getLogger(__name__)


async def stop_consumer(consumer: Any) -> None:
    """`consumer.stop()`; when aiokafka's own cancelled fetch task breaks the stop off,
    the remaining fetch tasks are cancelled and awaited and the client is closed."""
    try:
        await consumer.stop()
        return
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is None or task.cancelling():
            raise
    log.debug("aiokafka's consumer stop broke off on its own fetch task; finishing it")
    fetcher = consumer._fetcher
    for pending in list(fetcher._pending_tasks if fetcher is not None else ()):
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pending
    await consumer._client.close()
