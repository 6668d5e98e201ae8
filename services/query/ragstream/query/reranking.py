"""The reranker as the query service holds it: with its settings and the process's gauge of
reranks in flight, which the rerank stage reads to decide when to degrade."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from ragstream.common.config_rerank import RerankConfig
from ragstream.common.providers.rerank import Reranker

SKIPPED_NOTE = "rerank skipped: no reranker configured"


@dataclass(frozen=True, slots=True)
class LoadSignal:
    """How busy the process is when a rerank starts."""

    in_flight: int = 0
    """Reranks already running or waiting in this process (this one not counted)."""
    seconds_left: float | None = None
    """Time left before the query's deadline; None: the query has no deadline."""


class RerankGauge:
    """Counts the reranks in flight in one process: its queue depth, for `LoadSignal`.

    One per query service, owned by whoever runs the query pipeline:

        with gauge.track(seconds_left) as load:
            outcome = await rerank_chunks(reranker, query, chunks, options, load, cfg)
    """

    def __init__(self) -> None:
        self.in_flight = 0

    @contextlib.contextmanager
    def track(self, seconds_left: float | None = None) -> Iterator[LoadSignal]:
        signal = LoadSignal(self.in_flight, seconds_left)
        self.in_flight += 1
        try:
            yield signal
        finally:
            self.in_flight -= 1


@dataclass(frozen=True, slots=True)
class Reranking:
    """The reranker with its settings and this process's in-flight gauge."""

    reranker: Reranker
    cfg: RerankConfig
    gauge: RerankGauge
    pool: int = 50
    """Chunks offered to the reranker (it keeps chunk_top_k of them)."""
