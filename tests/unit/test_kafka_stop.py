"""bus.kafka_stop: aiokafka's own `AIOKafkaConsumer.stop` and `Fetcher.close`, run on a
consumer whose fetch failed and pauses before its retry (the state a broker that dropped
the connection leaves), end with the client closed and no fetch task left; a cancellation
of the caller still goes through."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.consumer.fetcher import Fetcher
from aiokafka.errors import NodeNotReadyError

from ragstream.common.bus.kafka_stop import stop_consumer


class Client:
    def __init__(self) -> None:
        self.closed = False

    async def send(self, node_id: int, request: Any) -> Any:
        raise NodeNotReadyError(f"node {node_id} is not ready")

    async def close(self) -> None:
        self.closed = True


async def failing_consumer(fetches: int, retry_backoff_s: float) -> tuple[Any, Client]:
    """An AIOKafkaConsumer and its Fetcher, with `fetches` fetch requests (aiokafka's own
    coroutine) pausing before their retry."""
    client = Client()
    fetcher: Any = object.__new__(Fetcher)
    fetcher._client = client
    fetcher._retry_backoff = retry_backoff_s
    fetcher._preferred_read_replica = {}
    fetcher._fetch_waiters = set()
    fetcher._closed = False
    fetcher._fetch_task = asyncio.create_task(asyncio.Event().wait())
    request = SimpleNamespace(topics=[("documents", [(0, 0, 0)])])
    fetcher._pending_tasks = [
        asyncio.create_task(fetcher._proc_fetch_request(None, 1, request)) for _ in range(fetches)
    ]
    consumer: Any = object.__new__(AIOKafkaConsumer)
    consumer._closed = False
    consumer._coordinator = None
    consumer._fetcher = fetcher
    consumer._client = client
    await asyncio.sleep(0.01)  # every fetch has failed and pauses
    return consumer, client


async def test_aiokafka_stop_breaks_off_on_its_own_cancelled_fetch() -> None:
    """The failure stop_consumer exists for, shown on the installed aiokafka: if it stops
    raising, stop_consumer's repair is no longer needed."""
    consumer, client = await failing_consumer(fetches=2, retry_backoff_s=30)
    with pytest.raises(asyncio.CancelledError):
        await consumer.stop()
    assert not client.closed
    assert not consumer._fetcher._pending_tasks[1].done()
    consumer._fetcher._pending_tasks[1].cancel()


async def test_stop_consumer_closes_the_client_and_every_fetch() -> None:
    consumer, client = await failing_consumer(fetches=3, retry_backoff_s=30)
    await stop_consumer(consumer)
    assert client.closed
    assert all(task.done() for task in consumer._fetcher._pending_tasks)


async def test_a_cancelled_caller_is_cancelled() -> None:
    """Cancelled while aiokafka waits for a fetch task to wind down: the CancelledError is
    the caller's own, so it goes through."""
    consumer, client = await failing_consumer(fetches=0, retry_backoff_s=30)

    async def slow_to_wind_down() -> None:
        try:
            await asyncio.sleep(30)
        finally:
            await asyncio.sleep(30)

    winding = asyncio.create_task(slow_to_wind_down())
    consumer._fetcher._pending_tasks.append(winding)
    stopping = asyncio.create_task(stop_consumer(consumer))
    await asyncio.sleep(0.01)
    stopping.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stopping
    assert stopping.cancelled()
    assert not client.closed
    winding.cancel()
