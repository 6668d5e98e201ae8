"""Per-stage wall-clock timings, reported in every query response, and traced.

Each timed stage is also a span (a child of whatever span is current, e.g. the RPC's), so
the timings a response reports and the trace of the same query come from one set of call
sites and cannot disagree about what the stages were.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry.trace import Span
from opentelemetry.util.types import AttributeValue

from ragstream.common.telemetry import own, span


class StageTimer:
    """Accumulates milliseconds per named stage, in the order the stages first start."""

    def __init__(self) -> None:
        self._ms: dict[str, float] = {}
        self._started = time.perf_counter()

    @contextmanager
    def stage(self, name: str, **attributes: AttributeValue) -> Iterator[Span]:
        """Times the block and traces it as span `name`; `attributes` become ragstream.*
        attributes, and the yielded span takes more (counts known only at the end)."""
        started = time.perf_counter()
        self._ms.setdefault(name, 0.0)  # in the order stages start, also when concurrent
        try:
            with span(name, attributes=own(stage=name, **attributes)) as current:
                yield current
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            self._ms[name] = self._ms.get(name, 0.0) + elapsed

    def items(self) -> list[tuple[str, float]]:
        return list(self._ms.items())

    @property
    def elapsed_s(self) -> float:
        """Seconds since the timer was made (the whole request, when made at its start)."""
        return time.perf_counter() - self._started
