"""A provider client's concurrency limit tells the bound observer of the waits it imposes,
and only of those."""

import asyncio

import pytest

from ragstream.common.providers.backlog import Slots, limited, observed


class Waits:
    def __init__(self, started: float = 0.0) -> None:
        self.events: list[str] = []
        self.started = started

    def queued(self) -> None:
        self.events.append("queued")

    def dequeued(self) -> None:
        self.events.append("dequeued")


async def test_a_free_slot_is_no_wait_and_a_taken_one_is_told() -> None:
    slots = Slots(1)
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
    slots = Slots(1)
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


async def _hold(slots: Slots) -> None:
    async with limited(slots):
        await asyncio.sleep(0)


async def test_a_freed_slot_goes_to_the_call_that_started_first() -> None:
    """A query's answer request (its call started long ago) goes before the keyword requests
    of the queries received since, whichever waited longer for the slot."""
    slots = Slots(1)
    order: list[str] = []

    async def request(name: str, started: float) -> None:
        with observed(Waits(started)):
            async with limited(slots):
                order.append(name)

    async with limited(slots):
        waiting = []
        for name, started in (("keywords of call 3", 3.0), ("keywords of call 2", 2.0)):
            waiting.append(asyncio.create_task(request(name, started)))
            await asyncio.sleep(0)
        waiting.append(asyncio.create_task(request("answer of call 1", 1.0)))
        await asyncio.sleep(0.01)
    await asyncio.gather(*waiting)
    assert order == ["answer of call 1", "keywords of call 2", "keywords of call 3"]
    assert not slots.locked()


async def test_a_waiter_cancelled_as_it_is_handed_the_slot_passes_it_on() -> None:
    slots = Slots(1)
    await slots.acquire(0.0)
    first = asyncio.create_task(slots.acquire(1.0))
    second = asyncio.create_task(slots.acquire(2.0))
    await asyncio.sleep(0)
    slots.release()  # handed to the first waiter ...
    first.cancel()  # ... which is cancelled before it runs
    with pytest.raises(asyncio.CancelledError):
        await first
    await asyncio.wait_for(second, 1.0)  # the slot went on to the next
    assert slots.locked()
    slots.release()
    assert not slots.locked()


async def test_a_servers_call_goes_before_requests_with_no_call_bound() -> None:
    """An indexer's extraction requests (no observer) queued first still come after a query
    that the server is answering."""
    slots = Slots(1)
    order: list[str] = []

    async def request(name: str, waits: Waits | None) -> None:
        with observed(waits):
            async with limited(slots):
                order.append(name)

    async with limited(slots):
        waiting = [asyncio.create_task(request(f"extraction {n}", None)) for n in range(2)]
        await asyncio.sleep(0.01)
        waiting.append(asyncio.create_task(request("keywords of a query", Waits(1e9))))
        await asyncio.sleep(0.01)
    await asyncio.gather(*waiting)
    assert order == ["keywords of a query", "extraction 0", "extraction 1"]
