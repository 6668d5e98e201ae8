"""The embedding scheduler's calls out, and how long the provider takes to answer one.

A partial batch waits, like Nagle's rule in TCP, while a call carrying requests as urgent as
its own is out (scheduler.py): until the call comes back, the batch fills, or the call has
been out for HOLD_ROUND_TRIPS recent round trips (a slow or hung provider holds nothing
back for longer). So a burst goes out in a few full batches instead of one partial batch
per free call slot: 64 concurrent queries against a 100 ms endpoint took 13-15 calls
without the rule, 9-11 with it (tests/bench/bench_burst.py). The price is at most one round
trip for a request that arrives while another one's call is out.
"""

from __future__ import annotations

import itertools
import math

HOLD_ROUND_TRIPS = 4.0
"""A call out holds partial batches back until it is this many recent round trips old."""
INITIAL_ROUND_TRIP_S = 0.5
"""The round trip assumed until a call has been answered."""
ROUND_TRIP_SMOOTHING = 0.2
"""Weight of the newest answered call in the moving average of the round trip."""


class CallsOut:
    """Calls out, each with the most urgent priority it carries (lower is more urgent) and
    when it was sent; times are the event loop's."""

    def __init__(self) -> None:
        self._out: dict[int, tuple[int, float]] = {}
        self._ids = itertools.count()
        self.round_trip_s: float | None = None
        """Moving average of how long answered calls took; None before the first."""

    def __len__(self) -> int:
        return len(self._out)

    def sent(self, priority: int, now: float) -> int:
        """Records a call sent now; returns its id."""
        call = next(self._ids)
        self._out[call] = (priority, now)
        return call

    def back(self, call: int, now: float, answered: bool) -> None:
        """The call came back; an answered one times the round trip (a failed one may have
        waited out a timeout, which says nothing of the provider's pace)."""
        _, sent = self._out.pop(call)
        if not answered:
            return
        took = now - sent
        if self.round_trip_s is None:
            self.round_trip_s = took
        else:
            self.round_trip_s += ROUND_TRIP_SMOOTHING * (took - self.round_trip_s)

    def expected_round_trip(self) -> float:
        """The moving average of the round trip, or INITIAL_ROUND_TRIP_S before the first."""
        return INITIAL_ROUND_TRIP_S if self.round_trip_s is None else self.round_trip_s

    def held_until(self, urgent: int) -> float:
        """Until when a partial batch whose most urgent request has priority `urgent` waits
        for the calls out as urgent as it: -inf when none is out."""
        sent = [at for priority, at in self._out.values() if priority <= urgent]
        if not sent:
            return -math.inf
        return max(sent) + HOLD_ROUND_TRIPS * self.expected_round_trip()
