"""Embedding requests on their way to the scheduler, announced before they arrive.

A server knows that a query will ask for vectors long before it does: from the moment it
is received, through its wait for an admission slot and its keyword call, until its embed
stage. Under a burst those first stages take turns on the CPU with the later stages of the
queries answered first, so the burst reaches the scheduler spread over hundreds of
milliseconds, and a partial batch sent while most of it is still on its way costs one more
provider request. So the caller announces its request (`Forecast.coming`, around the whole
call); the scheduler takes the announcement off when the request arrives
(`Forecast.arrived`, in the caller's context), and the block's end takes it off if the call
needed no vectors after all (answered without them, refused, failed). The scheduler holds a
partial batch while requests as urgent as its own are near, for a bounded time
(scheduler.py).

Near means that only CPU time stands between the request and the scheduler. A call that
waits on a remote model (`far()`, around its LLM keyword call) may be seconds away, and a
batch held for it would only add those seconds to the requests already queued.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(eq=False, slots=True)
class _Announcement:
    forecast: Forecast
    priority: int
    pending: bool = True
    """Not arrived and not withdrawn."""
    away: int = 0
    """Remote waits under way (they may overlap): the request is far while any is."""

    @property
    def near(self) -> bool:
        return self.pending and not self.away


_announced: contextvars.ContextVar[_Announcement | None] = contextvars.ContextVar(
    "ragstream_embedding_announcement", default=None
)


class Forecast:
    """How many announced requests are near, by priority (lower is more urgent). `changed`
    is called whenever one stops being near, which may end a batch's wait."""

    def __init__(self, changed: Callable[[], None]) -> None:
        self._near: Counter[int] = Counter()
        self._changed = changed

    @contextlib.contextmanager
    def coming(self, priority: int) -> Iterator[None]:
        """Announces that the code in the block (this task and the tasks it starts) will
        ask for vectors once, at `priority`."""
        announcement = _Announcement(self, priority)
        self._near[priority] += 1
        token = _announced.set(announcement)
        try:
            yield
        finally:
            _announced.reset(token)
            self._take_off(announcement)

    def arrived(self) -> None:
        """The current context's request has arrived: its announcement, if it has one
        here, is taken off. Later requests of the same block were not announced."""
        announcement = _announced.get()
        if announcement is not None and announcement.forecast is self:
            self._take_off(announcement)

    def any_near(self, urgent: int) -> bool:
        """Whether a request of priority `urgent` or more urgent is near."""
        return any(count for priority, count in self._near.items() if priority <= urgent)

    def _take_off(self, announcement: _Announcement) -> None:
        if announcement.near:
            self._leave(announcement)
        announcement.pending = False

    def _leave(self, announcement: _Announcement) -> None:
        self._near[announcement.priority] -= 1
        self._changed()

    def _away(self, announcement: _Announcement) -> None:
        if announcement.near:
            self._leave(announcement)
        announcement.away += 1

    def _back(self, announcement: _Announcement) -> None:
        announcement.away -= 1
        if announcement.near:
            self._near[announcement.priority] += 1


@contextlib.contextmanager
def far() -> Iterator[None]:
    """The current call waits on a remote model for the block: its announced request, if
    it has one, is not near meanwhile."""
    announcement = _announced.get()
    if announcement is None:
        yield
        return
    announcement.forecast._away(announcement)
    try:
        yield
    finally:
        announcement.forecast._back(announcement)
