"""Admission control: bounded work, a bounded queue shared fairly, and deadlines kept.

An expensive family of RPCs (queries: embedding, search, LLM; publishes: bus writes) gets
one `Admission`. Up to `concurrency` calls run; up to `queue` more wait. A call is refused
at once, with RESOURCE_EXHAUSTED and a hint of when to retry, when it would wait and its
deadline leaves too little time for the wait plus its own service time, both estimated from
recent service times (`ServiceTimes`). Starting work that cannot finish in time only delays
the calls behind it, so it is better refused in microseconds than timed out in seconds.
The query defaults (`server.max_concurrent_queries`, 4 per usable core) keep the CPU busy
while queries wait for the LLM, and no more: calls admitted beyond that wait for the event
loop instead, where no deadline is checked and every call slows down.

Fairness: the queue is a FIFO per workspace, and a freed slot goes to the workspaces in
turn (round robin), so a flood from one tenant delays another by at most one call per
flooding tenant. When the queue is full, a call from a workspace with a shorter queue than
the longest one takes the place of the newest call of the longest, which is refused: a
tenant can fill the queue only while nobody else needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import NoReturn

MIN_RETRY_S = 0.05
MAX_RETRY_S = 30.0
INITIAL_SERVICE_S = 0.5
"""The service time assumed before the first call finished."""
_SMOOTHING = 0.1
"""Weight of the newest call in the moving averages of service time."""


class Overloaded(Exception):
    """The call was refused; `retry_after_s` estimates when a retry would be admitted."""

    def __init__(self, family: str, retry_after_s: float) -> None:
        super().__init__(f"{family} at capacity")
        self.family = family
        self.retry_after_s = retry_after_s


@dataclass(slots=True)
class ServiceTimes:
    """Moving average and mean absolute deviation of recent service times (seconds).

    `expected_s` is the average plus two deviations (about the 90th percentile of a normal
    spread): a call is admitted only when it will very likely finish in time, because one
    that times out has taken the place of one that would not have."""

    mean_s: float = INITIAL_SERVICE_S
    deviation_s: float = 0.0

    def observe(self, elapsed_s: float) -> None:
        error = elapsed_s - self.mean_s
        self.mean_s += _SMOOTHING * error
        self.deviation_s += _SMOOTHING * (abs(error) - self.deviation_s)

    @property
    def expected_s(self) -> float:
        return self.mean_s + 2 * self.deviation_s


def queue_position(queued: Mapping[str, int], workspace: str) -> int:
    """Calls that start before a new call of `workspace` under round robin: its own queue,
    and from every other workspace as many calls as its own turn needs, at most."""
    mine = queued.get(workspace, 0)
    others = sum(min(n, mine + 1) for w, n in queued.items() if w != workspace)
    return mine + others


def expected_wait(position: int, concurrency: int, mean_service_s: float) -> float:
    """Seconds until a slot is free for the call after `position` queued calls, with
    `concurrency` slots each freeing about every `mean_service_s`."""
    return (position + 1) * mean_service_s / concurrency


def retry_hint(wait_s: float, service_s: float, time_left_s: float | None) -> float:
    """When to retry a refused call: once the calls queued now have started, and at least
    once the backlog has shrunk enough for the wait plus the service to fit the deadline.
    Not sooner: every caller refused now competes for the same places, and one that came
    back before the queue moved would only be refused again."""
    late = 0.0 if time_left_s is None else wait_s + service_s - time_left_s
    return min(MAX_RETRY_S, max(MIN_RETRY_S, wait_s, late))


@dataclass(slots=True, eq=False)
class _Waiter:
    workspace: str
    deadline: float | None
    turn: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class Admission:
    """Bounded concurrency plus a bounded, per-workspace fair wait queue, for one family."""

    def __init__(self, family: str, concurrency: int, queue: int) -> None:
        if concurrency < 1 or queue < 0:
            raise ValueError(f"{family}: concurrency must be >= 1 and queue >= 0")
        self.family = family
        self.concurrency = concurrency
        self.queue = queue
        self.running = 0
        self.rejected = 0
        self.times = ServiceTimes()
        self._full_at = -math.inf
        """When a call last found every slot taken."""
        self._queues: dict[str, deque[_Waiter]] = {}
        self._turns: deque[str] = deque()

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._queues.values())

    @contextlib.asynccontextmanager
    async def slot(
        self, workspace: str = "", time_left_s: float | None = None
    ) -> AsyncIterator[None]:
        """Holds one slot for the block, or raises Overloaded. Cancellation while queued
        (deadline, client gone) gives the place up."""
        if self.running < self.concurrency and not self._queues:
            self._start_now(time_left_s)
        else:
            self._full_at = time.monotonic()
            await self._wait(workspace, time_left_s)
        started = time.monotonic()
        try:
            yield
        except BaseException:
            # A call cut short (cancelled, failed) tells only that service takes at least
            # this long: counted when that is longer than the estimate, never shorter.
            elapsed = time.monotonic() - started
            if elapsed > self.times.mean_s:
                self.times.observe(elapsed)
            raise
        else:
            self.times.observe(time.monotonic() - started)
        finally:
            self._release()

    def _start_now(self, time_left_s: float | None) -> None:
        """Takes a free slot, unless the call has too little time left while the family has
        just been full: then the time it lost before it got here was spent queueing for the
        CPU behind other calls, so it is refused as they would have been. An idle family
        runs any call: a deadline too short for the service is not overload."""
        expected_s = self.times.expected_s
        short = time_left_s is not None and time_left_s < expected_s
        if short and time.monotonic() - self._full_at < expected_s:
            wait_s = expected_wait(0, self.concurrency, self.times.mean_s)
            self._refuse(retry_hint(wait_s, expected_s, time_left_s))
        self.running += 1

    async def _wait(self, workspace: str, time_left_s: float | None) -> None:
        sizes = {w: len(q) for w, q in self._queues.items()}
        wait_s = expected_wait(
            queue_position(sizes, workspace), self.concurrency, self.times.mean_s
        )
        if time_left_s is not None and wait_s + self.times.expected_s > time_left_s:
            self._refuse(retry_hint(wait_s, self.times.expected_s, time_left_s))
        if sum(sizes.values()) >= self.queue and not self._evict_for(workspace, sizes):
            self._refuse(retry_hint(wait_s, self.times.expected_s, None))
        deadline = None if time_left_s is None else time.monotonic() + time_left_s
        waiter = _Waiter(workspace, deadline)
        self._enqueue(waiter)
        try:
            await waiter.turn
        except asyncio.CancelledError:
            if waiter.turn.done() and not waiter.turn.cancelled():
                self._release()  # the slot was handed over just as the call gave up
            else:
                self._remove(waiter)
            raise

    def _refuse(self, retry_after_s: float) -> NoReturn:
        self.rejected += 1
        raise self._overloaded(retry_after_s)

    def _overloaded(self, retry_after_s: float) -> Overloaded:
        # Jitter, so that callers refused together do not all come back together.
        return Overloaded(self.family, retry_after_s * random.uniform(1.0, 1.5))

    def _evict_for(self, workspace: str, sizes: Mapping[str, int]) -> bool:
        """Refuses the newest call of the longest queue when `workspace`'s is shorter."""
        longest = max(sizes, key=lambda w: sizes[w], default=None)
        if longest is None or sizes[longest] <= sizes.get(workspace, 0) + 1:
            return False
        victim = self._queues[longest][-1]
        self._remove(victim)
        self.rejected += 1
        victim.turn.set_exception(self._overloaded(self._backlog_s()))
        return True

    def _enqueue(self, waiter: _Waiter) -> None:
        if waiter.workspace not in self._queues:
            self._queues[waiter.workspace] = deque()
            self._turns.append(waiter.workspace)
        self._queues[waiter.workspace].append(waiter)

    def _remove(self, waiter: _Waiter) -> None:
        queue = self._queues.get(waiter.workspace)
        if queue is None or waiter not in queue:
            return
        queue.remove(waiter)
        if not queue:
            del self._queues[waiter.workspace]
            self._turns.remove(waiter.workspace)

    def _release(self) -> None:
        """Frees a slot and hands it to the next waiter whose deadline can still be met;
        a waiter whose time left is shorter than the expected service time is refused."""
        self.running -= 1
        now = time.monotonic()
        while self._turns and self.running < self.concurrency:
            waiter = self._next()
            if waiter.turn.done():
                continue
            if waiter.deadline is not None and waiter.deadline - now < self.times.expected_s:
                self.rejected += 1
                waiter.turn.set_exception(self._overloaded(self._backlog_s()))
                continue
            self.running += 1
            waiter.turn.set_result(None)

    def _backlog_s(self) -> float:
        """The retry hint for a call refused while queued: when the queue will have moved."""
        wait_s = expected_wait(self.waiting, self.concurrency, self.times.mean_s)
        return retry_hint(wait_s, self.times.expected_s, None)

    def _next(self) -> _Waiter:
        workspace = self._turns.popleft()
        queue = self._queues[workspace]
        waiter = queue.popleft()
        if queue:
            self._turns.append(workspace)
        else:
            del self._queues[workspace]
        return waiter
