"""One caller's request to the embedding scheduler (scheduler.py), and the pieces of it that
its batches carry: a request larger than a batch is split, and answered once every row is
back, in order."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from opentelemetry import trace
from opentelemetry.trace import SpanContext

from ragstream.common.providers.embedding import Matrix


@dataclass(eq=False)
class EmbeddingRequest:
    """One caller's texts, sent in one or more pieces, answered once every row is back."""

    texts: Sequence[str]
    tokens: list[int]
    """Token count (or a bound of it, see `token_bounds`) of each text, for the batch limit."""
    priority: int
    """A `scheduler.Priority`: lower is served first."""
    future: asyncio.Future[Matrix]
    """Done when answered, failed, or cancelled by the caller (then nothing more is sent)."""
    enqueued: float
    """Event-loop time of arrival; the batch window runs from the oldest pending request."""
    alone: bool = False
    """It found the scheduler idle: sent without waiting for the window."""
    caller: SpanContext = trace.INVALID_SPAN_CONTEXT
    """The span that asked (e.g. a query's embed stage): the batch span links to it."""
    sent: int = 0
    """Texts packed into batches so far; `texts[sent:]` are still queued."""
    received: int = 0
    parts: dict[int, Matrix] = field(default_factory=dict)
    """Rows received so far, by the index of their first text."""

    def deliver(self, start: int, rows: Matrix) -> None:
        if self.future.done():
            return
        self.parts[start] = rows
        self.received += len(rows)
        if self.received == len(self.texts):
            ordered = [self.parts[index] for index in sorted(self.parts)]
            self.future.set_result(ordered[0] if len(ordered) == 1 else np.vstack(ordered))

    def fail(self, error: BaseException) -> None:
        if not self.future.done():
            self.future.set_exception(error)


Piece = tuple[EmbeddingRequest, int, int]
"""A request and the [start, end) range of its texts that one batch carries."""


def fail_pieces(pieces: Iterable[Piece], error: BaseException) -> None:
    for request, _, _ in pieces:
        request.fail(error)
