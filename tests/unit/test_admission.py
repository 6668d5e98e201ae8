"""Admission control: bounded work, a fair bounded queue, deadlines kept, fast refusal with
a retry hint."""

import asyncio

import pytest

from ragstream.query.transport.admission import Admission, Overloaded
from ragstream.query.transport.estimates import (
    MAX_RETRY_S,
    MIN_RETRY_S,
    ServiceTimes,
    expected_wait,
    queue_position,
    retry_hint,
)


async def hold(
    admission: Admission,
    release: asyncio.Event,
    entered: list[int],
    n: int,
    workspace: str = "",
    time_left_s: float | None = None,
) -> None:
    async with admission.slot(workspace, time_left_s):
        entered.append(n)
        await release.wait()


async def settle() -> None:
    await asyncio.sleep(0.01)


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


def test_retry_hint_waits_for_the_queue_and_for_the_deadline_to_fit() -> None:
    # Without a deadline: once the calls queued now have started.
    assert retry_hint(wait_s=5.0, service_s=1.0, time_left_s=None) == 5.0
    # A deadline too short for the backlog: the wait must shrink by what is missing...
    assert retry_hint(wait_s=5.0, service_s=1.0, time_left_s=2.0) == 5.0
    # ...and at least until the queue moved, even when little is missing.
    assert retry_hint(wait_s=0.5, service_s=2.0, time_left_s=1.0) == 1.5
    assert retry_hint(wait_s=0.0, service_s=0.001, time_left_s=None) == MIN_RETRY_S
    assert retry_hint(wait_s=500.0, service_s=5.0, time_left_s=1.0) == MAX_RETRY_S


def test_the_wait_is_the_queue_ahead_shared_by_the_slots() -> None:
    assert expected_wait(position=0, concurrency=4, mean_service_s=1.0) == 0.25
    assert expected_wait(position=7, concurrency=4, mean_service_s=1.0) == 2.0


def test_a_newcomer_waits_behind_one_turn_of_each_flooding_workspace() -> None:
    assert queue_position({}, "b") == 0
    assert queue_position({"a": 100}, "b") == 1
    assert queue_position({"a": 100, "c": 3}, "b") == 2
    assert queue_position({"a": 100, "b": 2}, "b") == 5  # its own 2, then 3 turns of a
    assert queue_position({"a": 1, "b": 4}, "b") == 5


def test_service_times_follow_recent_calls() -> None:
    times = ServiceTimes(mean_s=1.0)
    for _ in range(100):
        times.observe(0.2)
    assert times.mean_s == pytest.approx(0.2, abs=1e-3)
    assert times.expected_s == pytest.approx(0.2, abs=1e-3)
    times.observe(1.2)
    assert times.expected_s > times.mean_s > 0.2


async def test_a_call_that_cannot_finish_in_time_is_refused_at_once() -> None:
    admission = Admission("queries", concurrency=2, queue=10)
    admission.times = admission.held = ServiceTimes(mean_s=1.0)  # all of it spent working
    release = asyncio.Event()
    entered: list[int] = []
    tasks = [asyncio.create_task(hold(admission, release, entered, n)) for n in range(4)]
    await settle()  # 2 running, 2 queued: a newcomer waits about 1.5 s, then runs 1 s
    with pytest.raises(Overloaded) as refused:
        async with admission.slot("", time_left_s=2.0):
            pass
    assert 1.0 <= refused.value.retry_after_s <= 1.5 * 1.5  # the wait, with jitter
    patient = asyncio.create_task(hold(admission, release, entered, 4, time_left_s=3.0))
    await settle()
    assert admission.waiting == 3  # 1.5 s + 1 s fits 3 s: queued, not refused
    release.set()
    await asyncio.gather(*tasks, patient)
    assert sorted(entered) == [0, 1, 2, 3, 4]
    assert admission.rejected == 1


async def test_an_idle_family_runs_a_call_whatever_its_deadline() -> None:
    admission = Admission("queries", concurrency=1, queue=0)
    admission.times = ServiceTimes(mean_s=5.0)
    async with admission.slot("", time_left_s=0.1):
        assert admission.running == 1


async def test_a_flood_from_one_workspace_does_not_starve_another() -> None:
    admission = Admission("queries", concurrency=1, queue=20)
    release = asyncio.Event()
    entered: list[int] = []
    running = asyncio.create_task(hold(admission, release, entered, 0, "flood"))
    await settle()
    flood = [asyncio.create_task(hold(admission, release, entered, n, "flood")) for n in (1, 2, 3)]
    await settle()
    other = asyncio.create_task(hold(admission, release, entered, 9, "quiet"))
    await settle()
    release.set()
    await asyncio.gather(running, *flood, other)
    assert entered == [0, 1, 9, 2, 3]  # one turn each: quiet goes before the flood's rest


async def test_a_full_queue_makes_room_for_a_workspace_with_a_shorter_one() -> None:
    admission = Admission("queries", concurrency=1, queue=3)
    release = asyncio.Event()
    entered: list[int] = []
    tasks = [asyncio.create_task(hold(admission, release, entered, n, "flood")) for n in range(4)]
    await settle()  # 1 running, 3 queued: full
    other = asyncio.create_task(hold(admission, release, entered, 9, "quiet"))
    await settle()
    assert tasks[3].done() and isinstance(tasks[3].exception(), Overloaded)  # the newest
    with pytest.raises(Overloaded):  # the flood itself is still refused
        await hold(admission, release, entered, 5, "flood")
    release.set()
    await asyncio.gather(*tasks[:3], other)
    assert entered == [0, 1, 9, 2]
    assert admission.rejected == 2


async def test_a_queued_call_whose_time_ran_short_is_refused_instead_of_started() -> None:
    admission = Admission("queries", concurrency=1, queue=5)
    admission.times = ServiceTimes(mean_s=0.01)
    release = asyncio.Event()
    entered: list[int] = []
    running = asyncio.create_task(hold(admission, release, entered, 0))
    await settle()
    queued = asyncio.create_task(hold(admission, release, entered, 1, time_left_s=0.5))
    await settle()
    admission.times = ServiceTimes(mean_s=1.0)  # service got slower while it waited
    release.set()
    await running
    with pytest.raises(Overloaded):
        await queued
    assert entered == [0]
    assert (admission.running, admission.waiting) == (0, 0)


async def test_a_slot_handed_to_a_call_that_just_gave_up_goes_to_the_next() -> None:
    admission = Admission("queries", concurrency=1, queue=5)
    release = asyncio.Event()
    release.set()
    entered: list[int] = []
    async with admission.slot():
        leaving = asyncio.create_task(hold(admission, release, entered, 1))
        staying = asyncio.create_task(hold(admission, release, entered, 2))
        await settle()
    leaving.cancel()  # the slot was just handed to it; it has not resumed yet
    await asyncio.gather(leaving, staying, return_exceptions=True)
    assert leaving.cancelled()
    assert entered == [2]
    assert (admission.running, admission.waiting) == (0, 0)


def test_rejects_impossible_sizes() -> None:
    with pytest.raises(ValueError, match="queries"):
        Admission("queries", concurrency=0, queue=1)


async def test_after_a_full_spell_a_call_short_of_time_is_refused_despite_a_free_slot() -> None:
    admission = Admission("queries", concurrency=1, queue=5)
    admission.times = ServiceTimes(mean_s=1.0)
    release = asyncio.Event()
    entered: list[int] = []
    running = asyncio.create_task(hold(admission, release, entered, 0))
    await settle()
    queued = asyncio.create_task(hold(admission, release, entered, 1))  # finds it full
    await settle()
    release.set()
    await asyncio.gather(running, queued)
    with pytest.raises(Overloaded):  # its time went waiting for the CPU behind the others
        async with admission.slot("", time_left_s=0.3):
            pass
    async with admission.slot("", time_left_s=3.0):
        assert admission.running == 1
