"""What admission predicts from: recent service times, the event loop's lag, and the pure
arithmetic of a call's wait in a fair queue and of its retry hint (see `admission`)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass

MIN_RETRY_S = 0.05
MAX_RETRY_S = 30.0
INITIAL_SERVICE_S = 0.5
"""The duration of a call assumed before the first call finished."""
INITIAL_HELD_S = 0.05
"""The time a call holds its slot, likewise: its own work, without the remote waits. Set
low on purpose: a first burst must not be refused on a guess, and the estimate follows the
first calls within a few dozen of them."""
SMOOTHING = 0.1
"""Weight of the newest call in the moving averages of service time."""
LAG_PROBE_S = 0.05
"""How often the event loop's lag is sampled while a family has calls."""
_LAG_SMOOTHING = 0.3
TURNOVER_WINDOW = 64
MIN_TURNOVER_SAMPLES = 8
MIN_BIAS, MAX_BIAS = 0.5, 4.0
"""Bounds of the learned correction of predictions (`Admission.bias`), per call."""


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
        self.mean_s += SMOOTHING * error
        self.deviation_s += SMOOTHING * (abs(error) - self.deviation_s)

    @property
    def expected_s(self) -> float:
        return self.mean_s + 2 * self.deviation_s


class Turnover:
    """Seconds between completed calls while calls wait for a slot: how fast a saturated
    family gets through its queue, measured, not modelled. Under a burst every slot holder
    also waits for the CPU (the GIL, the database threads, the other calls' steps), so the
    time a call holds its slot grows with the load, and `held / concurrency` then
    overstates how long the queue takes; the rate at which calls finish is what a queued
    call waits on. Measured over the last `TURNOVER_WINDOW` completions of one saturated
    spell; `interval_s` is None until a spell has given `MIN_TURNOVER_SAMPLES` of them over
    at least `min_span_s` (a call's service time: calls finish in clusters, the queries of
    one embedding batch within milliseconds of each other, so a burst's first completions
    alone would give a turnover many times too fast), and keeps the last spell's figure
    after it ends."""

    def __init__(self) -> None:
        self.interval_s: float | None = None
        self._spell: deque[float] = deque(maxlen=TURNOVER_WINDOW)

    def completed(self, now: float, saturated: bool, min_span_s: float = 0.0) -> None:
        """A call finished at `now`; `saturated`: others were waiting for a slot."""
        if not saturated:
            self._spell.clear()  # the next gap would hold idle time
            return
        self._spell.append(now)
        span = self._spell[-1] - self._spell[0]
        if len(self._spell) >= MIN_TURNOVER_SAMPLES and span >= min_span_s:
            self.interval_s = span / (len(self._spell) - 1)


def queue_position(queued: Mapping[str, int], workspace: str) -> int:
    """Calls that start before a new call of `workspace` under round robin: its own queue,
    and from every other workspace as many calls as its own turn needs, at most."""
    mine = queued.get(workspace, 0)
    others = sum(min(n, mine + 1) for w, n in queued.items() if w != workspace)
    return mine + others


def expected_wait(
    position: int, concurrency: int, mean_service_s: float, lag_s: float = 0.0
) -> float:
    """Seconds until a slot is free for the call after `position` queued calls, with
    `concurrency` slots each freeing about every `mean_service_s`, and the event loop
    `lag_s` late in running whatever is ready."""
    return (position + 1) * mean_service_s / concurrency + lag_s


def retry_hint(wait_s: float, service_s: float, time_left_s: float | None) -> float:
    """When to retry a refused call: once the calls queued now have started, and at least
    once the backlog has shrunk enough for the wait plus the service to fit the deadline.
    Not sooner: every caller refused now competes for the same places, and one that came
    back before the queue moved would only be refused again."""
    late = 0.0 if time_left_s is None else wait_s + service_s - time_left_s
    return min(MAX_RETRY_S, max(MIN_RETRY_S, wait_s, late))


class LoopLag:
    """How late the event loop runs a callback that is due, as a moving average: under CPU
    starvation every ready call waits about this long for each of its steps, so a call
    queued now starts at least this late. Sampled every LAG_PROBE_S while `busy()` (the
    family has calls); an idle server keeps no timer."""

    def __init__(self, busy: Callable[[], bool]) -> None:
        self.mean_s = 0.0
        self._busy = busy
        self._probing: asyncio.AbstractEventLoop | None = None

    def watch(self) -> None:
        """Starts sampling on the running loop, unless it already does."""
        loop = asyncio.get_running_loop()
        if self._probing is not loop:
            self._probing = loop
            self._schedule(loop)

    def _schedule(self, loop: asyncio.AbstractEventLoop) -> None:
        due = loop.time() + LAG_PROBE_S
        loop.call_at(due, self._sample, loop, due)

    def _sample(self, loop: asyncio.AbstractEventLoop, due: float) -> None:
        self.mean_s += _LAG_SMOOTHING * (max(0.0, loop.time() - due) - self.mean_s)
        if self._busy():
            self._schedule(loop)
        else:
            self._probing = None
