"""Admission with leases: a call waiting on a remote model holds no slot, takes it back
ahead of new calls, and a call is refused only when its predicted wait (queue, slot
turnover, event-loop lag) and its service do not fit its deadline."""

import asyncio
import time

import pytest

from ragstream.common.providers.backlog import Slots, limited
from ragstream.query.lease import bound, remote
from ragstream.query.transport.admission import Admission, Overloaded
from ragstream.query.transport.estimates import ServiceTimes, Turnover


async def settle() -> None:
    await asyncio.sleep(0.01)


async def remote_call(
    admission: Admission, model: asyncio.Event, log: list[str], name: str
) -> None:
    """A call that works, waits on a remote model, then works again."""
    async with admission.slot() as lease:
        with bound(lease):
            log.append(f"{name} starts")
            async with remote():
                await model.wait()
            log.append(f"{name} resumes")


async def working(
    admission: Admission, hold: asyncio.Event, time_left_s: float | None = None
) -> None:
    """A call that works, holding its slot, until `hold` is set."""
    async with admission.slot("", time_left_s):
        await hold.wait()


async def test_a_call_in_a_remote_wait_frees_its_slot() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    model = asyncio.Event()
    log: list[str] = []
    calls = [asyncio.create_task(remote_call(admission, model, log, str(n))) for n in range(5)]
    await settle()
    # One slot, yet all five are under way: each lent the slot on while the model works.
    assert log == [f"{n} starts" for n in range(5)]
    assert (admission.running, admission.lent, admission.waiting) == (0, 5, 0)
    model.set()
    await asyncio.gather(*calls)
    assert (admission.running, admission.lent, admission.waiting) == (0, 0, 0)


async def test_a_call_back_from_a_remote_wait_goes_before_new_calls() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    model, work = asyncio.Event(), asyncio.Event()
    log: list[str] = []
    back = asyncio.create_task(remote_call(admission, model, log, "back"))
    await settle()  # "back" waits on the model, its slot lent

    async def working(name: str) -> None:
        async with admission.slot():
            log.append(f"{name} starts")
            await work.wait()

    busy = asyncio.create_task(working("busy"))  # takes the lent slot
    await settle()
    newcomer = asyncio.create_task(working("new"))  # queued behind "busy"
    await settle()
    model.set()  # "back" returns while "busy" holds the only slot: it queues too
    await settle()
    work.set()
    await asyncio.gather(back, busy, newcomer)
    assert log == ["back starts", "busy starts", "back resumes", "new starts"]


async def test_a_failed_remote_call_takes_the_slot_back_and_a_cancelled_one_does_not() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    async with admission.slot() as lease:
        with bound(lease):
            with pytest.raises(ValueError):
                async with remote():
                    assert admission.running == 0
                    raise ValueError("the model failed")
            assert admission.running == 1  # a fallback goes on with its slot
    model = asyncio.Event()
    log: list[str] = []
    call = asyncio.create_task(remote_call(admission, model, log, "gone"))
    await settle()
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    assert log == ["gone starts"]
    assert (admission.running, admission.lent) == (0, 0)


async def test_overlapping_remote_waits_lend_the_slot_once() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    async with admission.slot() as lease:
        with bound(lease):

            async def wait(seconds: float) -> None:
                async with remote():
                    await asyncio.sleep(seconds)

            await asyncio.gather(wait(0.01), wait(0.02))
            assert (admission.running, admission.lent) == (1, 0)
    assert admission.running == 0


async def test_remote_without_a_lease_does_nothing() -> None:
    async with remote():
        pass


async def test_a_burst_is_queued_not_refused_when_its_deadline_allows_the_wait() -> None:
    admission = Admission("queries", concurrency=2, queue=1000)
    admission.held = ServiceTimes(mean_s=0.01)
    admission.times = ServiceTimes(mean_s=0.1)

    async def call() -> None:
        async with admission.slot("", time_left_s=30.0):
            await asyncio.sleep(0)

    results = await asyncio.gather(*(call() for _ in range(500)), return_exceptions=True)
    assert [r for r in results if r is not None] == []
    assert admission.rejected == 0


async def test_refused_only_when_the_predicted_wait_and_service_exceed_the_deadline() -> None:
    admission = Admission("queries", concurrency=2, queue=1000)
    admission.held = ServiceTimes(mean_s=0.1)  # a slot turns over every 0.05 s
    admission.times = ServiceTimes(mean_s=0.5)
    hold = asyncio.Event()
    # 2 running, 20 queued
    queued = [asyncio.create_task(working(admission, hold)) for _ in range(22)]
    await settle()
    # The 21st in the queue: (20 + 1) * 0.1 / 2 = 1.05 s of wait, then 0.5 s of service.
    fits = asyncio.create_task(working(admission, hold, time_left_s=1.6))
    await settle()
    assert not fits.done()
    with pytest.raises(Overloaded):  # 1.1 s of wait + 0.5 s > 1.5 s
        await working(admission, hold, time_left_s=1.5)
    hold.set()
    await asyncio.gather(*queued, fits)


async def test_the_event_loop_lag_counts_in_the_predicted_wait() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    admission.held = ServiceTimes(mean_s=0.01)
    admission.times = ServiceTimes(mean_s=0.1)
    hold = asyncio.Event()

    running = asyncio.create_task(working(admission, hold))
    await settle()
    # 0.01 s of wait + 0.1 s: fits
    queued = asyncio.create_task(working(admission, hold, time_left_s=1.0))
    await settle()
    assert not queued.done()
    admission.lag.mean_s = 1.0  # every ready step now waits a second for the CPU
    with pytest.raises(Overloaded) as refused:
        await working(admission, hold, time_left_s=1.0)
    assert refused.value.retry_after_s >= 1.0
    hold.set()
    await asyncio.gather(running, queued)


async def test_the_lag_probe_measures_a_starved_loop() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    async with admission.slot():
        for _ in range(6):
            await asyncio.sleep(0.04)
            time.sleep(0.15)  # noqa: ASYNC251 - the point: a CPU hog on the loop's thread
    assert admission.lag.mean_s > 0.05


class Recorded(ServiceTimes):
    """Service times that keep every observation."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[float] = []

    def observe(self, elapsed_s: float) -> None:
        self.seen.append(elapsed_s)
        super().observe(elapsed_s)


async def test_the_wait_to_take_the_slot_back_is_not_counted_as_service() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    admission.times = recorded = Recorded()
    model = asyncio.Event()
    log: list[str] = []
    back = asyncio.create_task(remote_call(admission, model, log, "back"))
    await settle()

    async def busy() -> None:
        async with admission.slot():
            model.set()  # "back" returns now and queues for the slot for 0.3 s
            await asyncio.sleep(0.3)

    await asyncio.gather(back, busy())
    assert recorded.seen[0] >= 0.3  # "busy"
    assert recorded.seen[1] < 0.2  # "back": its 0.3 s in the queue is the backlog's


async def test_calls_away_on_a_remote_wait_count_ahead_of_a_newcomer() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    admission.held = ServiceTimes(mean_s=1.0)
    admission.times = ServiceTimes(mean_s=0.1)
    async with admission.slot("", time_left_s=1.5):  # idle: runs whatever its deadline
        pass
    model = asyncio.Event()
    log: list[str] = []
    away = [asyncio.create_task(remote_call(admission, model, log, str(n))) for n in range(4)]
    await settle()
    assert (admission.running, admission.lent) == (0, 4)
    # The slot is free, but the four come back first with about half their work left each:
    # (2 + 1) * 1.0 s of wait, then 0.1 s of service, does not fit 1.5 s.
    with pytest.raises(Overloaded):
        async with admission.slot("", time_left_s=1.5):
            pass
    async with admission.slot("", time_left_s=5.0):
        assert admission.running == 1
    model.set()
    await asyncio.gather(*away)


async def test_callers_refused_together_are_told_to_come_back_one_after_another() -> None:
    admission = Admission("queries", concurrency=1, queue=0)
    admission.held = ServiceTimes(mean_s=0.5)
    hold = asyncio.Event()

    running = asyncio.create_task(working(admission, hold))
    await settle()
    hints = []
    for _ in range(6):  # the queue holds nobody: each is refused at once
        with pytest.raises(Overloaded) as refused:
            await working(admission, hold)
        hints.append(refused.value.retry_after_s)
    # Each waits for those refused before it: the sixth behind five, 0.5 s each at least.
    assert hints[-1] >= 5 * 0.5 > 1.5 * hints[0]
    hold.set()
    await running


async def test_calls_slower_than_predicted_make_the_next_predictions_longer() -> None:
    admission = Admission("queries", concurrency=1, queue=10)
    admission.held = admission.times = ServiceTimes(mean_s=0.01)
    for _ in range(30):  # each takes about 5 times what was predicted
        async with admission.slot():
            await asyncio.sleep(0.05)
        admission.held = admission.times = ServiceTimes(mean_s=0.01)  # the model stays wrong
    assert admission.bias > 2.0
    hold = asyncio.Event()

    running = asyncio.create_task(working(admission, hold))
    await settle()
    admission.lag.mean_s = 0.0
    # Unscaled, 0.01 s of wait and 0.01 s of service fit 0.03 s; scaled by the bias, not.
    with pytest.raises(Overloaded):
        async with asyncio.timeout(1):
            await working(admission, hold, time_left_s=0.03)
    hold.set()
    await running


async def test_calls_away_count_against_the_queue_even_with_a_slot_free() -> None:
    admission = Admission("queries", concurrency=1, queue=1)
    model = asyncio.Event()
    log: list[str] = []
    away = [asyncio.create_task(remote_call(admission, model, log, str(n))) for n in range(2)]
    await settle()
    assert (admission.running, admission.lent) == (0, 2)  # 1 working + 1 more at most
    with pytest.raises(Overloaded):
        async with admission.slot():
            pass
    model.set()
    await asyncio.gather(*away)


def test_turnover_is_the_interval_between_completions_of_one_saturated_spell() -> None:
    turnover = Turnover()
    for n in range(7):
        turnover.completed(10.0 + 0.1 * n, saturated=True)
    assert turnover.interval_s is None  # too few completions to tell
    turnover.completed(10.7, saturated=True)
    assert turnover.interval_s == pytest.approx(0.1)
    turnover.completed(20.0, saturated=False)  # idle since: the gap is no turnover
    assert turnover.interval_s == pytest.approx(0.1)  # the last spell's figure is kept
    for n in range(8):
        turnover.completed(30.0 + 0.5 * n, saturated=True)
    assert turnover.interval_s == pytest.approx(0.5)


def test_a_cluster_of_completions_shorter_than_a_call_is_no_turnover() -> None:
    """The queries of one embedding batch finish within milliseconds: their gaps say nothing
    of how fast the queue moves until the spell spans a call's service time."""
    turnover = Turnover()
    for n in range(20):
        turnover.completed(10.0 + 0.001 * n, saturated=True, min_span_s=0.5)
    assert turnover.interval_s is None
    turnover.completed(10.6, saturated=True, min_span_s=0.5)
    assert turnover.interval_s == pytest.approx(0.6 / 20)


async def test_a_measured_turnover_replaces_a_slot_time_inflated_by_the_load() -> None:
    admission = Admission("queries", concurrency=1, queue=100)

    async def short() -> None:
        async with admission.slot():
            await asyncio.sleep(0.005)

    await asyncio.gather(*(short() for _ in range(20)))  # queued behind each other
    assert admission.turnover.interval_s is not None
    assert admission.turnover.interval_s < 0.05
    # Slot holders that look slow (they shared the CPU with the whole burst): modelled, the
    # 21st in the queue would wait 21 s; at the measured turnover, a fraction of a second.
    admission.held = ServiceTimes(mean_s=1.0)
    admission.times = ServiceTimes(mean_s=0.1)
    admission.bias = 1.0
    hold = asyncio.Event()
    queued = [asyncio.create_task(working(admission, hold)) for _ in range(21)]
    await settle()
    fits = asyncio.create_task(working(admission, hold, time_left_s=2.0))
    await settle()
    assert not fits.done()  # admitted: queued, not refused
    hold.set()
    await asyncio.gather(*queued, fits)
    assert admission.rejected == 0


async def test_the_bias_learned_against_the_modelled_turnover_is_dropped_once_measured() -> None:
    admission = Admission("queries", concurrency=1, queue=100)
    admission.bias = 3.0
    admission.times = ServiceTimes(mean_s=0.001)  # the turnover's span needs no more

    async def short() -> None:
        async with admission.slot():
            await asyncio.sleep(0.001)

    await asyncio.gather(*(short() for _ in range(9)))  # 8 completions with others queued
    assert admission.turnover.interval_s is not None
    assert admission.bias < 3.0 * 0.5


async def test_calls_predicted_from_the_modelled_turnover_do_not_bias_the_measured_one() -> None:
    admission = Admission("queries", concurrency=1, queue=100)
    admission.held = admission.times = ServiceTimes(mean_s=0.0001)  # far too short

    async def short() -> None:
        async with admission.slot():
            await asyncio.sleep(0.005)

    # All predicted from the model (nothing measured when they arrived), all late.
    await asyncio.gather(*(short() for _ in range(30)))
    assert admission.turnover.interval_s is not None
    assert admission.bias == 1.0


async def test_once_measured_every_call_in_flight_counts_ahead_of_a_newcomer() -> None:
    admission = Admission("queries", concurrency=1, queue=100)
    admission.turnover.interval_s = 0.1  # measured: a call finishes every 0.1 s
    admission.times = ServiceTimes(mean_s=0.05)
    model = asyncio.Event()
    log: list[str] = []
    away = [asyncio.create_task(remote_call(admission, model, log, str(n))) for n in range(20)]
    await settle()
    # The slot is free, but the 20 calls away finish first: (20 + 1) * 0.1 s.
    with pytest.raises(Overloaded):
        async with admission.slot("", time_left_s=2.0):
            pass
    async with admission.slot("", time_left_s=2.5):
        pass
    model.set()
    await asyncio.gather(*away)


async def test_calls_whose_overruns_spread_are_admitted_with_a_margin() -> None:
    admission = Admission("queries", concurrency=1, queue=100)
    admission.turnover.interval_s = 0.1
    admission.times = ServiceTimes(mean_s=0.05)
    for ratio in [0.5, 1.5] * 20:  # on average as predicted, but spread
        admission._calibrate(ratio, 1.0, cut_short=False)
    assert admission.bias == pytest.approx(1.0, abs=0.1)
    assert admission.bias_deviation > 0.3
    hold = asyncio.Event()
    running = asyncio.create_task(working(admission, hold))
    await settle()
    # 2 in flight with it: 0.2 s on average, but likely up to about twice that.
    with pytest.raises(Overloaded):
        async with asyncio.timeout(1):
            await working(admission, hold, time_left_s=0.3)
    hold.set()
    await running


async def provider_call(admission: Admission, provider: Slots, seconds: float) -> None:
    """A call whose remote wait goes through a provider client limited to `provider`'s
    slots, each request taking `seconds` there."""
    async with admission.slot() as lease:
        with bound(lease):
            async with remote(), limited(provider):
                await asyncio.sleep(seconds)


async def test_calls_queued_for_a_provider_slot_saturate_the_family() -> None:
    # Plenty of the family's own slots, none ever waited for: the model is the bottleneck.
    admission = Admission("queries", concurrency=64, queue=100)
    provider = Slots(2)
    calls = [asyncio.create_task(provider_call(admission, provider, 0.02)) for _ in range(20)]
    await settle()
    assert admission.waiting == 0
    assert admission.backlogged == 18
    await asyncio.gather(*calls)
    assert admission.backlogged == 0
    # Two finish every 20 ms: measured while calls queued at the provider.
    assert admission.turnover.interval_s is not None
    assert 0.005 <= admission.turnover.interval_s < 0.03


async def test_the_wait_for_a_provider_slot_is_not_counted_as_service() -> None:
    admission = Admission("queries", concurrency=4, queue=10)
    admission.times = recorded = Recorded()
    provider = Slots(1)
    first = asyncio.create_task(provider_call(admission, provider, 0.3))
    await settle()
    await asyncio.gather(first, provider_call(admission, provider, 0.01))
    assert recorded.seen[0] >= 0.3  # the first held the provider's slot for 0.3 s
    assert recorded.seen[1] < 0.2  # the second's 0.3 s in its queue is the backlog's


async def test_a_saturated_model_admits_what_its_turnover_serves_in_time() -> None:
    admission = Admission("queries", concurrency=64, queue=1000)
    admission.times = ServiceTimes(mean_s=0.02)
    provider = Slots(2)
    await asyncio.gather(*(provider_call(admission, provider, 0.02) for _ in range(20)))
    assert admission.times.expected_s < 0.1  # not inflated by the queue at the provider
    assert admission.bias < 1.5
    # A call finishes about every 10 ms: 40 in flight take about 0.4 s, 150 about 1.5 s.
    calls = [asyncio.create_task(provider_call(admission, provider, 0.02)) for _ in range(40)]
    await settle()
    async with admission.slot("", time_left_s=2.0):
        pass
    more = [asyncio.create_task(provider_call(admission, provider, 0.02)) for _ in range(110)]
    await settle()
    with pytest.raises(Overloaded):
        async with admission.slot("", time_left_s=1.0):
            pass
    await asyncio.gather(*calls, *more)
