"""The embedding scheduler's calls out: what holds a partial batch back, and for how long."""

import math

import pytest

from ragstream.common.providers.calls_out import HOLD_ROUND_TRIPS, INITIAL_ROUND_TRIP_S, CallsOut


def test_only_calls_as_urgent_as_the_batch_hold_it_back() -> None:
    out = CallsOut()
    assert out.held_until(0) == -math.inf
    out.sent(2, now=10.0)  # an indexing call
    assert out.held_until(0) == -math.inf  # a query is not held behind it
    assert out.held_until(2) == 10.0 + HOLD_ROUND_TRIPS * INITIAL_ROUND_TRIP_S
    query = out.sent(0, now=11.0)
    assert out.held_until(2) == 11.0 + HOLD_ROUND_TRIPS * INITIAL_ROUND_TRIP_S  # the newest
    out.back(query, now=11.1, answered=True)
    assert out.held_until(0) == -math.inf
    assert len(out) == 1


def test_the_round_trip_follows_answered_calls_only() -> None:
    out = CallsOut()
    out.back(out.sent(0, now=0.0), now=0.1, answered=True)
    assert out.round_trip_s == pytest.approx(0.1)
    out.back(out.sent(0, now=1.0), now=61.0, answered=False)  # a timeout: no pace
    assert out.round_trip_s == pytest.approx(0.1)
    out.back(out.sent(0, now=2.0), now=2.6, answered=True)
    round_trip_s = out.round_trip_s
    assert round_trip_s is not None
    assert 0.1 < round_trip_s < 0.6
    call = out.sent(0, now=5.0)
    assert out.held_until(0) == pytest.approx(5.0 + HOLD_ROUND_TRIPS * round_trip_s)
    out.back(call, now=5.1, answered=True)
