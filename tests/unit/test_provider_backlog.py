"""A provider client's concurrency limit tells the bound observer of the waits it imposes,
and only of those."""

import asyncio

import pytest

from ragstream.common.providers.backlog import limited, observed


class Waits:
    def __init__(self) -> None:
        self.events: list[str] = []

    def queued(self) -> None:
        self.events.append("queued")

    def dequeued(self) -> None:
        self.events.append("dequeued")


async def test_a_free_slot_is_no_wait_and_a_taken_one_is_told() -> None:
    slots = asyncio.Semaphore(1)
    waits = Waits()
    with observed(waits):
        async with limited(slots):
            assert waits.events == []
            second = asyncio.create_task(_hold(slots))  # inherits the observer
            await asyncio.sleep(0.01)
            assert waits.events == ["queued"]
        await second
    assert waits.events == ["queued", "dequeued"]
    assert not slots.locked()


async def test_a_wait_given_up_is_told_as_ended_and_takes_no_slot() -> None:
    slots = asyncio.Semaphore(1)
    waits = Waits()
    async with limited(slots):  # no observer bound: nothing to tell
        with observed(waits):
            waiting = asyncio.create_task(_hold(slots))
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    assert waits.events == ["queued", "dequeued"]
    assert not slots.locked()


async def _hold(slots: asyncio.Semaphore) -> None:
    async with limited(slots):
        await asyncio.sleep(0)
