"""Admission control: bounded work, a bounded queue shared fairly, and deadlines kept.

An expensive family of RPCs (queries: embedding, search, LLM; publishes: bus writes) gets
one `Admission`. Up to `concurrency` calls work at once; more wait in a queue. A call holds
its slot only while it works: a query waiting on a remote model (the LLM's keywords, the
embedding request, the reranker, the answer) gives it up through the `ragstream.query.lease`
protocol (the stages wrap those awaits in `lease.remote()`, and `slot` yields the `Lease`),
and takes it back after the wait ahead of every call not yet started. So the slots bound
the CPU work (the query default, `server.max_concurrent_queries`, 4 per usable core, keeps
the cores busy), while any number of admitted queries wait on the models together: a burst
reaches the embedding scheduler as a burst, which it batches into a few requests.

The queue is sized for bursts: `queue` bounds the calls waiting for a slot or on a remote
model, a bound of memory, not of cores. A call is refused at once, with RESOURCE_EXHAUSTED
and a hint of when to retry, only when it would not finish before its deadline. Before the
family has been saturated, the prediction is its wait for a slot (its place in the queue
times the mean time a call holds a slot, shared by the slots, plus the event loop's current
lag, `LoopLag`) plus the expected duration of a whole call (remote waits included, not the
queues it met). Once it has been, it is Little's law over the measured interval between
completions while it was saturated (`Turnover`): every call in flight finishes before the
newcomer, one every interval (measured over at least a call's service time: a burst's
calls finish in clusters, one embedding batch's queries within milliseconds). Saturated
means that calls wait for a slot, or for a slot of a provider client (the LLM's
`llm.concurrency`, told through `ragstream.common.providers.backlog`, which serves queries
before the indexer and the oldest query first, so calls finish about in the order they
came): when the model is the
bottleneck, admitted calls queue there, not here. Under load a slot holder also waits for
the CPU, so the time it holds its slot overstates the queue's pace, while the completion
rate is what a newcomer waits on.
The prediction is then scaled by how far recent calls overran theirs (`Admission.bias`, which
learns what the model leaves out: a remote model's own queue, lag spikes), plus twice the
spread of those overruns: a call is admitted when it will very likely finish in time, not
when the average call would. Starting work that cannot finish in time only delays
the calls behind it, so it is better refused in microseconds than timed out in seconds. The
retry hint queues a refused caller behind those refused before it that have not come back
yet, so that refused callers do not return together only to be refused again.

Fairness: the queue is a FIFO per workspace served in turn, and a full queue makes room for
a workspace with a shorter queue than the longest one (fair_queue.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import math
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import NoReturn

from ragstream.query.lease import Lease
from ragstream.query.transport.estimates import (
    INITIAL_HELD_S,
    MAX_BIAS,
    MAX_RETRY_S,
    MIN_BIAS,
    SMOOTHING,
    LoopLag,
    ServiceTimes,
    Turnover,
    expected_wait,
    queue_position,
    retry_hint,
)
from ragstream.query.transport.fair_queue import FairQueue, Waiter


class Overloaded(Exception):
    """The call was refused; `retry_after_s` estimates when a retry would be admitted."""

    def __init__(self, family: str, retry_after_s: float) -> None:
        super().__init__(f"{family} at capacity")
        self.family = family
        self.retry_after_s = retry_after_s


@dataclass(slots=True, eq=False)
class _Call:
    """An admitted call: the `Lease` its stages release around remote waits."""

    admission: Admission
    started: float = field(default_factory=time.monotonic)
    held_since: float = field(default_factory=time.monotonic)
    held_s: float = 0.0
    """Time the slot was held before `held_since` (earlier spells between remote waits)."""
    holding: bool = True
    away: int = 0
    """Remote waits under way (they may overlap)."""
    queued_s: float = 0.0
    """Time spent queued to take the slot back or for a provider's slot: the backlog's, not
    the call's own."""
    backlogs: int = 0
    """Waits for a provider's slot under way (they may overlap)."""
    backlog_since: float = 0.0

    def release(self) -> None:
        self.away += 1
        if self.away == 1 and self.holding:
            self.holding = False
            self.held_s += time.monotonic() - self.held_since
            self.admission.lent += 1
            self.admission._release()

    async def reacquire(self) -> None:
        self.away -= 1
        if self.away > 0 or self.holding:
            return
        back = time.monotonic()
        await self.admission._resume()
        self.admission.lent -= 1
        self.holding = True
        self.held_since = time.monotonic()
        self.queued_s += self.held_since - back

    def queued(self) -> None:
        self.backlogs += 1
        if self.backlogs == 1:
            self.backlog_since = time.monotonic()
            self.admission.backlogged += 1

    def dequeued(self) -> None:
        self.backlogs -= 1
        if self.backlogs == 0:
            self.queued_s += time.monotonic() - self.backlog_since
            self.admission.backlogged -= 1

    def held(self) -> float:
        """Seconds the call held its slot, spells between remote waits summed."""
        return self.held_s + (time.monotonic() - self.held_since if self.holding else 0.0)

    def end(self) -> None:
        if self.holding:
            self.admission._release()
        else:
            self.admission.lent -= 1


class Admission:
    """Bounded concurrency plus a bounded, per-workspace fair wait queue, for one family."""

    def __init__(self, family: str, concurrency: int, queue: int) -> None:
        if concurrency < 1 or queue < 0:
            raise ValueError(f"{family}: concurrency must be >= 1 and queue >= 0")
        self.family = family
        self.concurrency = concurrency
        self.queue = queue
        self.running = 0
        """Slots held."""
        self.lent = 0
        """Admitted calls whose slot is given up for a remote wait."""
        self.backlogged = 0
        """Of those, the calls queued for a provider client's slot (the LLM's concurrency):
        the family is saturated behind the model, though no call waits for one of its own
        slots."""
        self.rejected = 0
        self.times = ServiceTimes()
        """Duration of whole calls, remote waits included but not the waits to take the
        slot back (the queue's share, which `expected_wait` predicts): what must fit a
        deadline besides the wait."""
        self.held = ServiceTimes(INITIAL_HELD_S)
        """Time a call holds its slot: how fast the slots turn over, until `turnover` has
        been measured."""
        self.turnover = Turnover()
        """How fast the family gets through its queue when saturated, measured."""
        self.lag = LoopLag(lambda: self.running + self.lent + self.waiting > 0)
        self.bias = 1.0
        self.bias_deviation = 0.0
        """Mean absolute deviation of the ratios `bias` averages."""
        """Moving average of how long calls took over how long they were predicted to take
        (queue wait plus service): whatever the prediction leaves out (a remote model's own
        queue, calls coming back from remote waits ahead of this one, spikes of lag) is
        learned from the calls themselves and scales every prediction."""
        self._full_at = -math.inf
        """When a call last found every slot taken."""
        self._queue = FairQueue()
        self._returns: list[float] = []
        """When the refused callers are told to come back (a heap), until they are due."""
        self._resuming: deque[Waiter] = deque()
        """Admitted calls back from a remote wait: served before any new call."""

    @property
    def waiting(self) -> int:
        return len(self._queue)

    @contextlib.asynccontextmanager
    async def slot(
        self, workspace: str = "", time_left_s: float | None = None
    ) -> AsyncIterator[Lease]:
        """Holds one slot for the block, except while the block's remote waits lend it
        (see the module doc), or raises Overloaded. Cancellation while queued (deadline,
        client gone) gives the place up."""
        self.lag.watch()
        arrived = time.monotonic()
        measured = self.turnover.interval_s is not None
        if self.running < self.concurrency and not self._queue and not self._resuming:
            predicted_s = self._start_now(time_left_s)
        else:
            self._full_at = time.monotonic()
            predicted_s = await self._wait(workspace, time_left_s)
        call = _Call(self)
        try:
            yield call
        except BaseException:
            # A call cut short (cancelled, failed) tells only that service takes at least
            # this long: counted when that is longer than the estimate, never shorter.
            self._observe(call, cut_short=True)
            if measured == (self.turnover.interval_s is not None):
                self._calibrate(time.monotonic() - arrived, predicted_s, cut_short=True)
            raise
        else:
            self._observe(call, cut_short=False)
            # Only against the model the prediction used: a call predicted from the modelled
            # turnover says nothing of the measured one.
            if measured == (self.turnover.interval_s is not None):
                self._calibrate(time.monotonic() - arrived, predicted_s, cut_short=False)
        finally:
            self._completed()
            call.end()

    def _completed(self) -> None:
        measured = self.turnover.interval_s is not None
        saturated = bool(self._queue or self._resuming or self.backlogged)
        self.turnover.completed(time.monotonic(), saturated, min_span_s=self.times.mean_s)
        if not measured and self.turnover.interval_s is not None:
            # learned against the modelled turnover, which is now replaced
            self.bias, self.bias_deviation = 1.0, 0.0

    def _calibrate(self, elapsed_s: float, predicted_s: float, cut_short: bool) -> None:
        ratio = min(MAX_BIAS, max(MIN_BIAS, elapsed_s / max(predicted_s, 1e-3)))
        if not cut_short or ratio > self.bias:
            error = ratio - self.bias
            self.bias += SMOOTHING * error
            self.bias_deviation += SMOOTHING * (abs(error) - self.bias_deviation)

    def _predicted(self, wait_s: float) -> float:
        """Unscaled: the wait plus a call's expected service."""
        return wait_s + self.times.expected_s

    def _total(self, position: int) -> float:
        """Unscaled: how long a call arriving behind `position` queued calls will take.
        Saturated (a measured turnover), by Little's law: every call in flight finishes
        before it, one every turnover; else its wait plus a call's expected service."""
        interval = self.turnover.interval_s
        if interval is None:
            return self._predicted(self._wait_s(position))
        ahead = position - self._lent_ahead() + self.lent + self.running
        return max(self.times.expected_s, (ahead + 1) * interval)

    def _late(self, total_s: float, time_left_s: float | None) -> bool:
        return time_left_s is not None and total_s * self._likely() > time_left_s

    def _likely(self) -> float:
        """The bias plus two of its deviations: a call is admitted when it will very likely
        finish in time, not when the average call would."""
        return min(MAX_BIAS, self.bias + 2 * self.bias_deviation)

    def _observe(self, call: _Call, cut_short: bool) -> None:
        for times, elapsed in (
            (self.times, time.monotonic() - call.started - call.queued_s),
            (self.held, call.held()),
        ):
            if not cut_short or elapsed > times.mean_s:
                times.observe(elapsed)

    def _start_now(self, time_left_s: float | None) -> float:
        """Takes a free slot, unless the call would not finish in time while other calls
        are ahead of it (away on a remote wait: they come back first) or the family has just
        been full (then the time it lost before it got here was spent queueing for the CPU
        behind other calls, so it is refused as they would have been). An idle family runs
        any call: a deadline too short for the service is not overload."""
        wait_s = self._wait_s(self._lent_ahead())
        total = self._total(self._lent_ahead())
        busy = self.lent > 0 or time.monotonic() - self._full_at < self.times.expected_s
        if busy and self._late(total, time_left_s):
            # The calls away are back and done in about one call's time.
            backlog_s = max(wait_s * self.bias, self.times.mean_s if self.lent else 0.0)
            self._refuse(retry_hint(backlog_s, self.times.expected_s, time_left_s))
        if self._full():  # the slot is free, but the calls away fill the queue
            self._refuse(retry_hint(wait_s * self.bias, self.times.expected_s, None))
        self.running += 1
        return total

    def _full(self) -> bool:
        """Whether the family holds all the calls it may: `concurrency` working and `queue`
        more, waiting for a slot or away on a remote wait."""
        in_flight = self.running + self.lent + self.waiting + len(self._resuming)
        return in_flight >= self.concurrency + self.queue

    def _lent_ahead(self) -> int:
        """Queue places the calls away on a remote wait take: each comes back ahead of any
        new call, with (on average) half of its work left."""
        return self.lent // 2

    def _wait_s(self, position: int) -> float:
        """The predicted wait behind `position` calls: at the measured turnover (which
        includes the loop's lag) once the family has been saturated, else modelled from
        the time a call holds its slot."""
        if self.turnover.interval_s is not None:
            return (position + 1) * self.turnover.interval_s
        return expected_wait(position, self.concurrency, self.held.mean_s, self.lag.mean_s)

    async def _wait(self, workspace: str, time_left_s: float | None) -> float:
        ahead = len(self._resuming) + self._lent_ahead()
        position = queue_position(self._queue.sizes(), workspace) + ahead
        wait_s = self._wait_s(position)
        total = self._total(position)
        if self._late(total, time_left_s):
            self._refuse(retry_hint(wait_s * self.bias, self.times.expected_s, time_left_s))
        if self._full() and not self._evict_for(workspace):
            self._refuse(retry_hint(wait_s, self.times.expected_s, None))
        deadline = None if time_left_s is None else time.monotonic() + time_left_s
        waiter = Waiter(workspace, deadline)
        self._queue.push(waiter)
        await self._turn(waiter, lambda: self._queue.remove(waiter))
        return total

    async def _resume(self) -> None:
        """Takes a slot back for a call returning from a remote wait: at once when one is
        free, else before every call that has not started."""
        if self.running < self.concurrency and not self._resuming:
            self.running += 1
            return
        waiter = Waiter("", None)
        self._resuming.append(waiter)
        await self._turn(waiter, lambda: _discard(self._resuming, waiter))

    async def _turn(self, waiter: Waiter, forget: Callable[[], None]) -> None:
        try:
            await waiter.turn
        except asyncio.CancelledError:
            if waiter.turn.done() and not waiter.turn.cancelled():
                self._release()  # the slot was handed over just as the call gave up
            else:
                forget()
            raise

    def _refuse(self, retry_after_s: float) -> NoReturn:
        self.rejected += 1
        raise self._overloaded(retry_after_s)

    def _overloaded(self, retry_after_s: float) -> Overloaded:
        """The refusal, with a hint that also queues the caller behind the callers refused
        before it that have not come back yet: a hint that sent every refused caller back
        when the present backlog clears would bring them back together, to be refused
        again, and refusals cost the CPU the answers need."""
        now = time.monotonic()
        while self._returns and self._returns[0] <= now:
            heapq.heappop(self._returns)
        behind_s = self._wait_s(len(self._returns)) * self.bias
        # Jitter, so that callers refused together do not all come back together.
        hint_s = min(MAX_RETRY_S, max(retry_after_s, behind_s)) * random.uniform(1.0, 1.5)
        heapq.heappush(self._returns, now + hint_s)
        return Overloaded(self.family, hint_s)

    def _evict_for(self, workspace: str) -> bool:
        """Refuses the newest call of the longest queue when `workspace`'s is shorter."""
        victim = self._queue.victim_for(workspace)
        if victim is None:
            return False
        self.rejected += 1
        victim.turn.set_exception(self._overloaded(self._backlog_s()))
        return True

    def _release(self) -> None:
        """Frees a slot and hands it on: to a call back from a remote wait first, else to
        the next waiter whose deadline can still be met; a waiter whose time left is
        shorter than the expected service time is refused."""
        self.running -= 1
        now = time.monotonic()
        while self.running < self.concurrency and (self._resuming or self._queue):
            waiter = self._resuming.popleft() if self._resuming else self._queue.pop()
            if waiter.turn.done():
                continue
            service_s = self.times.expected_s * self.bias
            if waiter.deadline is not None and waiter.deadline - now < service_s:
                self.rejected += 1
                waiter.turn.set_exception(self._overloaded(self._backlog_s()))
                continue
            self.running += 1
            waiter.turn.set_result(None)

    def _backlog_s(self) -> float:
        """The retry hint for a call refused while queued: when the queue will have moved."""
        wait_s = self._wait_s(self.waiting + len(self._resuming) + self._lent_ahead()) * self.bias
        return retry_hint(wait_s, self.times.expected_s, None)


def _discard(queue: deque[Waiter], waiter: Waiter) -> None:
    if waiter in queue:
        queue.remove(waiter)
