"""Waits for a provider client's concurrency limit, told to whoever runs the call.

A client that bounds its requests in flight (the LLM client's `llm.concurrency`) queues the
calls beyond the bound. When the model is the bottleneck, that queue is where a server's
calls wait: a call queued there is not being served, and the time it waits is the backlog's,
not the call's. Admission control must see it, or it takes those waits for slow service and
cannot tell that the family is saturated (`ragstream.query.transport.admission`). So a client
takes its slot through `limited`, which tells the `Observer` bound to the current context
(the admitted call; none outside a server) when such a wait starts and when it ends. A slot
free at once is no wait and tells nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Iterator
from typing import Protocol


class Observer(Protocol):
    """Told when the call it watches starts and stops waiting for a provider's slot; the
    two come in pairs, possibly overlapping (a call's requests may run side by side)."""

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


@contextlib.asynccontextmanager
async def limited(slots: asyncio.Semaphore) -> AsyncIterator[None]:
    """Holds one of `slots` for the block; a wait for it is told to the bound observer."""
    observer = _observer.get()
    if observer is None or not slots.locked():
        async with slots:
            yield
        return
    observer.queued()
    try:
        await slots.acquire()
    finally:
        observer.dequeued()
    try:
        yield
    finally:
        slots.release()
