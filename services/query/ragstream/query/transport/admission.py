"""Admission control: a bounded number of calls at work and a bounded queue in front of them.

An expensive family of RPCs (queries: embedding, search, LLM; publishes: bus writes) gets
one `Admission`. Up to `concurrency` calls run; up to `queue` more wait in arrival order;
a call arriving to a full queue is turned away at once with a hint of when to retry. That
keeps latency bounded under overload (a caller learns in microseconds that it must back off)
instead of letting every call slow down until all of them time out.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

MIN_RETRY_S = 0.05
MAX_RETRY_S = 30.0
_SMOOTHING = 0.2
"""Weight of the newest call in the moving average of service time."""


class Overloaded(Exception):
    """The family is at capacity; `retry_after_s` estimates when the queue will have room."""

    def __init__(self, family: str, retry_after_s: float) -> None:
        super().__init__(f"{family} at capacity")
        self.family = family
        self.retry_after_s = retry_after_s


def retry_hint(waiting: int, concurrency: int, mean_service_s: float) -> float:
    """Time for the calls already queued to start, assuming `concurrency` slots each free
    after `mean_service_s`: a caller retrying then finds the queue about empty."""
    estimate = mean_service_s * max(1, waiting) / concurrency
    return min(MAX_RETRY_S, max(MIN_RETRY_S, estimate))


class Admission:
    """Bounded concurrency plus a bounded FIFO wait queue, for one family of RPCs."""

    def __init__(self, family: str, concurrency: int, queue: int) -> None:
        if concurrency < 1 or queue < 0:
            raise ValueError(f"{family}: concurrency must be >= 1 and queue >= 0")
        self.family = family
        self.concurrency = concurrency
        self.queue = queue
        self._slots = asyncio.Semaphore(concurrency)
        self.running = 0
        self.waiting = 0
        self.rejected = 0
        self._mean_service_s = 0.5

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Holds one slot for the block; raises Overloaded when no slot and no queue place
        is free. Cancellation while queued (deadline, client gone) gives the place up."""
        if self.running + self.waiting >= self.concurrency + self.queue:
            self.rejected += 1
            raise Overloaded(
                self.family, retry_hint(self.waiting, self.concurrency, self._mean_service_s)
            )
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        started = time.monotonic()
        try:
            yield
        finally:
            self.running -= 1
            self._slots.release()
            elapsed = time.monotonic() - started
            self._mean_service_s += _SMOOTHING * (elapsed - self._mean_service_s)
