"""Waits for a provider client's concurrency limit, told to whoever runs the call.

A client that bounds its requests in flight (the LLM client's `llm.concurrency`) queues the
calls beyond the bound. When the model is the bottleneck, that queue is where a server's
calls wait: a call queued there is not being served, and the time it waits is the backlog's,
not the call's. Admission control must see it, or it takes those waits for slow service and
cannot tell that the family is saturated (`ragstream.query.transport.admission`). So a client
takes its slot through `limited`, which tells the `Observer` bound to the current context
(the admitted call; none outside a server) when such a wait starts and when it ends. A slot
free at once is no wait and tells nothing.

A freed slot goes to a waiting call of a server (one with an observer: a client is waiting
for it) before any other request (the indexer's extraction and summaries, which a
document backlog can queue by the dozen), and among those to the call that started first
(`Slots`), not to the longest waiting request. A query asks the LLM twice, for its keywords
and for its answer: with first-come order, a burst's answer requests queue behind the
keyword requests of every query received since, so every query of the burst finishes near
its end, however early it came. Oldest call first, they finish about in the order they came,
which is what admission control predicts (Little's law over the completions) and what a
deadline needs. The other requests keep their order of arrival.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import heapq
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from typing import Protocol


class Observer(Protocol):
    """Told when the call it watches starts and stops waiting for a provider's slot; the
    two come in pairs, possibly overlapping (a call's requests may run side by side)."""

    @property
    def started(self) -> float:
        """When the call started (`time.monotonic()`): an earlier call is served first."""
        ...

    def queued(self) -> None: ...

    def dequeued(self) -> None: ...


_observer: contextvars.ContextVar[Observer | None] = contextvars.ContextVar(
    "ragstream_provider_observer", default=None
)


@contextlib.contextmanager
def observed(observer: Observer | None) -> Iterator[None]:
    """Makes `observer` the one told of waits in this task and the tasks it starts."""
    token = _observer.set(observer)
    try:
        yield
    finally:
        _observer.reset(token)


class Slots:
    """A provider client's concurrency limit: like a semaphore, but a freed slot goes to an
    urgent waiter before the others, and among either to the one whose call started first."""

    def __init__(self, limit: int) -> None:
        self._free = limit
        self._waiters: list[tuple[bool, float, int, asyncio.Future[None]]] = []
        """A heap by urgency, call start, then arrival; entries whose waiter left stay until
        popped."""
        self._arrivals = itertools.count()

    def locked(self) -> bool:
        """Whether a new request would wait."""
        return self._free == 0

    async def acquire(self, started: float, urgent: bool = False) -> None:
        """Returns holding a slot; `urgent`, then `started` order the waiters. Cancelled, it
        holds none."""
        if self._free:
            self._free -= 1
            return
        turn = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (not urgent, started, next(self._arrivals), turn))
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release()  # handed a slot as it was cancelled: the next waiter's
            raise

    def release(self) -> None:
        while self._waiters:
            *_, turn = heapq.heappop(self._waiters)
            if not turn.done():
                turn.set_result(None)  # the slot passes straight to the waiter
                return
        self._free += 1


@contextlib.asynccontextmanager
async def limited(slots: Slots) -> AsyncIterator[None]:
    """Holds one of `slots` for the block; a wait for it is told to the bound observer, and
    the observed call (a server's) goes before requests with none (the indexer's)."""
    observer = _observer.get()
    if not slots.locked():
        await slots.acquire(0.0)  # free: taken at once
    elif observer is None:
        await slots.acquire(time.monotonic())
    else:
        observer.queued()
        try:
            await slots.acquire(observer.started, urgent=True)
        finally:
            observer.dequeued()
    try:
        yield
    finally:
        slots.release()
