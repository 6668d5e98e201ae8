"""Per-stage wall-clock timings, reported in every query response."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


class StageTimer:
    """Accumulates milliseconds per named stage, in first-seen order."""

    def __init__(self) -> None:
        self._ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            self._ms[name] = self._ms.get(name, 0.0) + elapsed

    def items(self) -> list[tuple[str, float]]:
        return list(self._ms.items())
