"""The service's metrics (OpenTelemetry instruments), exported with the traces' resource.

Instruments come from the global meter, like tracers: created at import through the API's
proxy, they report to the meter provider that `telemetry_session` installs, and cost nothing
when none is. The functions below fix each instrument's attribute names in one place.

- ragstream.query.duration, ragstream.query.stage.duration (s): per RPC and per stage, by mode;
- ragstream.embedding.batch.size: texts per embedding provider call;
- ragstream.rerank.degraded: queries whose rerank was cut short or failed, by reason;
- ragstream.documents.processed / .failed, ragstream.indexer.dead_lettered: indexing outcomes;
- ragstream.consumer.lag: records not yet committed, per topic and partition.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

from opentelemetry import metrics
from opentelemetry.metrics import CallbackOptions, Observation

_meter = metrics.get_meter("ragstream")
_SECONDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_BATCH = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)

_query_duration = _meter.create_histogram(
    "ragstream.query.duration",
    unit="s",
    description="Query RPC duration, by mode and method.",
    explicit_bucket_boundaries_advisory=_SECONDS,
)
_stage_duration = _meter.create_histogram(
    "ragstream.query.stage.duration",
    unit="s",
    description="Duration of one query stage, by mode and stage.",
    explicit_bucket_boundaries_advisory=_SECONDS,
)
_batch_size = _meter.create_histogram(
    "ragstream.embedding.batch.size",
    unit="{text}",
    description="Texts in one embedding provider call.",
    explicit_bucket_boundaries_advisory=_BATCH,
)
_rerank_degraded = _meter.create_counter(
    "ragstream.rerank.degraded",
    unit="{query}",
    description="Queries whose rerank was limited by load or failed (retrieval order kept).",
)
_documents_processed = _meter.create_counter(
    "ragstream.documents.processed",
    unit="{document}",
    description="Document events applied, by resulting state.",
)
_documents_failed = _meter.create_counter(
    "ragstream.documents.failed",
    unit="{document}",
    description="Documents whose indexing failed (state FAILED), by error type.",
)
_dead_lettered = _meter.create_counter(
    "ragstream.indexer.dead_lettered",
    unit="{record}",
    description="Undecodable or invalid records sent to the dead-letter topic.",
)


def record_query(
    mode: str, method: str, total_s: float, stages: Iterable[tuple[str, float]]
) -> None:
    """One query: its total time and each stage's (`stages` in milliseconds, as timed)."""
    _query_duration.record(total_s, {"ragstream.mode": mode, "rpc.method": method})
    for stage, ms in stages:
        _stage_duration.record(ms / 1000, {"ragstream.mode": mode, "ragstream.stage": stage})


def record_embedding_batch(texts: int, priority: str) -> None:
    """`priority`: the most urgent request in the batch (query, merge or indexing)."""
    _batch_size.record(texts, {"ragstream.priority": priority})


def record_rerank_degraded(reason: str) -> None:
    """`reason`: "load" (only the top chunks reranked), "failed" or "timeout"."""
    _rerank_degraded.add(1, {"ragstream.reason": reason})


def record_document(state: str) -> None:
    _documents_processed.add(1, {"ragstream.state": state})


def record_document_failure(error_type: str) -> None:
    _documents_failed.add(1, {"error.type": error_type})


def record_dead_letter(topic: str) -> None:
    _dead_lettered.add(1, {"messaging.destination.name": topic})


class ConsumerLag:
    """The latest lag each consumer measured, read by the metric reader's thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lag: dict[tuple[str, int], int] = {}

    def update(self, lag: Mapping[tuple[str, int], int]) -> None:
        """Replaces the values of the given (topic, partition) pairs."""
        with self._lock:
            self._lag.update(lag)

    def forget(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Drops partitions this process no longer reads (closed, or rebalanced away)."""
        with self._lock:
            for key in partitions:
                self._lag.pop(key, None)

    def observe(self, options: CallbackOptions) -> Iterable[Observation]:
        with self._lock:
            current = list(self._lag.items())
        return [
            Observation(
                lag,
                {"messaging.destination.name": topic, "messaging.destination.partition.id": str(p)},
            )
            for (topic, p), lag in current
        ]


consumer_lag = ConsumerLag()
"""Updated by the keyed consumers; one per process, like the meter it reports to."""
_meter.create_observable_gauge(
    "ragstream.consumer.lag",
    callbacks=[consumer_lag.observe],
    unit="{record}",
    description="Records published but not yet committed by this process's consumer group.",
)
