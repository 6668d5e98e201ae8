"""Admission control: bounded work, bounded queue, fast refusal with a retry hint."""

import asyncio

import pytest

from ragstream.query.transport.admission import (
    MAX_RETRY_S,
    MIN_RETRY_S,
    Admission,
    Overloaded,
    retry_hint,
)


async def hold(admission: Admission, release: asyncio.Event, entered: list[int], n: int) -> None:
    async with admission.slot():
        entered.append(n)
        await release.wait()


async def test_runs_up_to_concurrency_queues_the_rest_and_refuses_beyond() -> None:
    admission = Admission("queries", concurrency=2, queue=1)
    release = asyncio.Event()
    entered: list[int] = []
    tasks = [asyncio.create_task(hold(admission, release, entered, n)) for n in range(3)]
    await asyncio.sleep(0.01)
    assert (admission.running, admission.waiting, entered) == (2, 1, [0, 1])
    with pytest.raises(Overloaded) as refused:
        async with admission.slot():
            pass
    assert refused.value.family == "queries"
    assert MIN_RETRY_S <= refused.value.retry_after_s <= MAX_RETRY_S
    release.set()
    await asyncio.gather(*tasks)
    assert entered == [0, 1, 2]  # the queued call ran, in arrival order
    assert (admission.running, admission.waiting, admission.rejected) == (0, 0, 1)


async def test_a_cancelled_waiter_gives_its_queue_place_up() -> None:
    admission = Admission("queries", concurrency=1, queue=1)
    release = asyncio.Event()
    entered: list[int] = []
    running = asyncio.create_task(hold(admission, release, entered, 0))
    await asyncio.sleep(0.01)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.02):
            await hold(admission, release, entered, 1)
    assert admission.waiting == 0
    queued = asyncio.create_task(hold(admission, release, entered, 2))  # not refused
    await asyncio.sleep(0.01)
    release.set()
    await asyncio.gather(running, queued)
    assert entered == [0, 2]


async def test_a_failing_call_frees_its_slot() -> None:
    admission = Admission("publishes", concurrency=1, queue=0)
    with pytest.raises(RuntimeError):
        async with admission.slot():
            raise RuntimeError("boom")
    async with admission.slot():
        assert admission.running == 1


def test_retry_hint_grows_with_the_backlog_and_stays_bounded() -> None:
    assert retry_hint(waiting=10, concurrency=2, mean_service_s=1.0) == 5.0
    assert retry_hint(waiting=20, concurrency=2, mean_service_s=1.0) == 10.0
    assert retry_hint(waiting=0, concurrency=64, mean_service_s=0.001) == MIN_RETRY_S
    assert retry_hint(waiting=10_000, concurrency=1, mean_service_s=5.0) == MAX_RETRY_S


def test_rejects_impossible_sizes() -> None:
    with pytest.raises(ValueError, match="queries"):
        Admission("queries", concurrency=0, queue=1)
