"""The consume loop of both indexing stages: poll, apply, commit only what is done.

Stage 1 (documents, key `workspace/doc_id`) runs in a `KeyedConsumer`: records of one key are
applied one after another in offset order; different keys run concurrently, up to
`concurrency`. Stage 2 (graph merges) runs in a `BatchConsumer` (batch_consumer.py): one
poll is one batch, applied in one call. Either way a poll is committed only after every
record in it was applied or dead-lettered, so a crash re-delivers at most the poll in flight,
and the idempotent stages make the replay harmless. Poison events go to the dead-letter
topic with the reason in headers. Any other failure (a store or provider outage) is retried
with capped exponential backoff and never committed past.
"""

from __future__ import annotations

import abc
import asyncio
import functools
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from opentelemetry import trace
from opentelemetry.trace import Span

from ragstream.common.bus.protocols import BusRecord, Consumer, OutgoingRecord, Publisher
from ragstream.common.bus.spans import consumer_span
from ragstream.common.config import IndexerConfig
from ragstream.common.errors import BackendUnavailableError
from ragstream.common.events import DocumentChange, PoisonEvent, decode
from ragstream.common.instruments import consumer_lag, record_dead_letter
from ragstream.common.telemetry import mark_failed

log = logging.getLogger(__name__)
T = TypeVar("T")
A = TypeVar("A")
Apply = Callable[[DocumentChange], Awaitable[object]]
MAX_BACKOFF_S = 30.0
LAG_INTERVAL_S = 5.0
LAG_TIMEOUT_S = 5.0
"""A lag measurement gives up after this long: on a cluster that cannot be reached (or that
refuses a rotated password) it would otherwise hold up the next poll, which reconnects."""
"""How often the consumer's lag is measured for the consumer-lag metric."""


@runtime_checkable
class ReportsLag(Protocol):
    """A consumer that can tell how far its group is behind (both bus backends can)."""

    async def lag(self) -> dict[tuple[str, int], int]:
        """Per (topic, partition) read by this member, records not committed yet."""
        ...


class Stopped(Exception):
    """Shutdown came while a record was still failing; its batch must not be committed."""


def group_by_key(records: Sequence[BusRecord]) -> list[list[BusRecord]]:
    """Records grouped by key, each group in offset order, groups in first-seen order."""
    groups: dict[str, list[BusRecord]] = defaultdict(list)
    for record in records:
        groups[record.key].append(record)
    return list(groups.values())


def dead_letter(record: BusRecord, error: Exception) -> OutgoingRecord:
    """The dead-letter copy of a record: original key, value and headers plus the reason."""
    reason = (
        ("dlt.source.topic", record.topic.encode()),
        ("dlt.source.partition", str(record.partition).encode()),
        ("dlt.source.offset", str(record.offset).encode()),
        ("dlt.error.class", type(error).__name__.encode()),
        ("dlt.error.message", str(error).encode()[:4096]),
    )
    return OutgoingRecord(record.key, record.value, record.headers + reason)


class ConsumeLoop(abc.ABC, Generic[T, A]):
    """Owns the consume loop; `run` returns once `stop` is set and in-flight work is done.
    Subclasses say how one poll is processed (`process`) with `apply` (of type A)."""

    def __init__(
        self,
        consumer: Consumer,
        publisher: Publisher,
        dead_letter_topic: str,
        decode: Callable[[BusRecord], T],
        apply: A,
        cfg: IndexerConfig,
        settle: Callable[[asyncio.Event], Awaitable[None]] | None = None,
    ) -> None:
        self._settle = settle
        self._consumer = consumer
        self._publisher = publisher
        self._dlt = dead_letter_topic
        self._decode = decode
        self._apply = apply
        self._cfg = cfg
        self._slots = asyncio.Semaphore(cfg.concurrency)
        self._batch: asyncio.Task[bool] | None = None
        self._lag_due = 0.0
        self._lag_partitions: set[tuple[str, int]] = set()

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self._report_lag()
            if self._settle is not None:
                await self._settle(stop)
            records = await self._consumer.poll(self._cfg.batch_size, timeout=0.5)
            if not records:
                continue
            self._batch = asyncio.create_task(self._process_batch(records, stop))
            try:
                finished = await self._batch
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise  # this loop itself is being cancelled, not just the batch
                log.warning("abandoned %d records at a rebalance; re-delivered", len(records))
                continue
            finally:
                self._batch = None
            if not finished:
                log.info("stopped with unfinished records; they will be re-delivered")
                return
            await self._consumer.commit(records)

    @property
    def consumer(self) -> Consumer:
        return self._consumer

    async def close(self) -> None:
        """Closes the bus consumer (leaving its group); call after `run` returned."""
        consumer_lag.forget(self._lag_partitions)
        await self._consumer.close()

    async def _report_lag(self) -> None:
        """Measures the lag for the consumer-lag gauge, at most every LAG_INTERVAL_S."""
        now = time.monotonic()
        if not isinstance(self._consumer, ReportsLag) or now < self._lag_due:
            return
        self._lag_due = now + LAG_INTERVAL_S
        try:
            async with asyncio.timeout(LAG_TIMEOUT_S):
                lag = await self._consumer.lag()
        except Exception as exc:  # noqa: BLE001 - a metric must never stop consumption
            log.debug("consumer lag unavailable: %s", exc)
            return
        consumer_lag.forget(self._lag_partitions - lag.keys())
        consumer_lag.update(lag)
        self._lag_partitions = set(lag)

    def abandon_in_flight(self) -> None:
        """Cancels the batch being processed, which is then not committed: a rebalance gave
        its partitions to another member, which processes the records again. Safe because
        every stage is idempotent (a cancelled document is replayed from its stored state)."""
        if self._batch is not None:
            self._batch.cancel()

    async def _process_batch(self, records: Sequence[BusRecord], stop: asyncio.Event) -> bool:
        """True when every record was applied or dead-lettered; False when stopped first."""
        stopped = False
        try:
            await self.process(records, stop)
        except* Stopped:
            stopped = True
        return not stopped

    @abc.abstractmethod
    async def process(self, records: Sequence[BusRecord], stop: asyncio.Event) -> None:
        """Applies (or dead-letters) every record of one poll; raises Stopped on shutdown."""

    async def decoded(self, record: BusRecord, span: Span) -> T | None:
        """The record's item; None when it was poison and went to the dead-letter topic."""
        try:
            return self._decode(record)
        except PoisonEvent as exc:
            log.warning("dead-lettering %s@%d: %s", record.topic, record.offset, exc)
            mark_failed(span, exc)
            record_dead_letter(record.topic)
            await self._publisher.publish(self._dlt, [dead_letter(record, exc)])
            return None

    async def with_retries(
        self, apply: Callable[[], Awaitable[object]], what: str, stop: asyncio.Event
    ) -> None:
        """Runs `apply` until it succeeds; on shutdown raises Stopped instead of retrying."""
        delay = self._cfg.retry_backoff_s
        while True:
            try:
                await apply()
                return
            except Exception as exc:  # any failure here is retried, never skipped
                if isinstance(exc, BackendUnavailableError):  # its message says why
                    log.error("%s failed (%s); retrying", what, exc)
                else:
                    log.exception("%s failed; retrying", what)
                trace.get_current_span().add_event("retry", {"error.type": type(exc).__name__})
            # On shutdown the record stays uncommitted and is re-delivered after restart.
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except TimeoutError:
                delay = min(delay * 2, MAX_BACKOFF_S)
                continue
            raise Stopped(what)


class KeyedConsumer(ConsumeLoop[T, Callable[[T], Awaitable[object]]]):
    """Stage 1: each record applied on its own, in offset order per key; different keys
    concurrently, up to `concurrency`."""

    async def process(self, records: Sequence[BusRecord], stop: asyncio.Event) -> None:
        async with asyncio.TaskGroup() as group:
            for key_records in group_by_key(records):
                group.create_task(self._process_key(key_records, stop))

    async def _process_key(self, records: list[BusRecord], stop: asyncio.Event) -> None:
        async with self._slots:
            for record in records:
                with consumer_span(record) as span:
                    item = await self.decoded(record, span)
                    if item is None:
                        continue
                    what = f"{record.topic}@{record.offset} (key {record.key})"
                    await self.with_retries(functools.partial(self._apply, item), what, stop)


def document_consumer(
    consumer: Consumer,
    publisher: Publisher,
    dead_letter_topic: str,
    apply: Apply,
    cfg: IndexerConfig,
) -> KeyedConsumer[DocumentChange]:
    """Stage 1: document events, each applied in order."""

    def decode_change(record: BusRecord) -> DocumentChange:
        return decode(record, cfg.max_document_bytes)

    return KeyedConsumer(consumer, publisher, dead_letter_topic, decode_change, apply, cfg)


def abandon_on_rebalance(keyed: ConsumeLoop[Any, Any]) -> None:
    """A Kafka group member abandons its batch when a rebalance cannot wait for it (the
    embedded log has one member and no rebalances)."""
    on_abandon = getattr(keyed.consumer, "on_abandon", None)
    if on_abandon is not None:
        on_abandon(keyed.abandon_in_flight)
