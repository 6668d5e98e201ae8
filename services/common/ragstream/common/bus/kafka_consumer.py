"""One member of a Kafka consumer group, behind the Consumer protocol (aiokafka).

Commits are manual and per partition: `commit(records)` stores offset + 1 of the highest
record given for each partition, and only for partitions this member still owns, so a
member never moves the offset of a partition that a rebalance handed to someone else.

Rebalances: before aiokafka gives the partitions up it calls the listener below, which
waits (up to `drain_timeout_s`) until the batch in flight is committed, so the next owner
starts exactly after it. A batch that does not finish in time (e.g. retrying through a store
outage) is abandoned: the abandon hooks run (the indexer cancels it) and its records stay
uncommitted, so their next owner processes them again, which the idempotent stages make
harmless. A batch is "in flight" from the poll that returned it until it is committed or the
next poll (the caller polls again only once it is done with a batch, committed or not).

A changed login (a rotated password file, kafka_login.py) is noticed at the next poll, when
no batch is in flight: the member leaves the group and a new aiokafka consumer with the new
login joins it, resuming from the committed offsets like any new owner. If the cluster
refuses a consumer's login (when it starts or starts anew), each poll returns nothing for a
while (1 s, doubling up to 30 s, or until the login changes) and the reason, naming the
setting, is logged at every attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, IllegalStateError, KafkaError

from ragstream.common.bus.kafka_admin import KafkaUnavailableError, start_or_explain
from ragstream.common.bus.kafka_login import SaslLogin
from ragstream.common.bus.kafka_security import KafkaOptions
from ragstream.common.bus.kafka_stop import stop_consumer
from ragstream.common.bus.protocols import BusRecord

log = logging.getLogger(__name__)
PartitionKey = tuple[str, int]
"""(topic, partition)."""
FIRST_RETRY_S = 1.0
MAX_RETRY_S = 30.0
COMMIT_TIMEOUT_S = 15.0
"""How long a commit may wait for the group coordinator. The client retries a lost
coordinator for ever: after a password rotated on the brokers it cannot reconnect with
the login it was built with, and the loop stuck in the commit would never reach the poll
that rebuilds it with the new one."""


def bus_record(record: Any) -> BusRecord:
    """A BusRecord from an aiokafka ConsumerRecord. Keys that are not UTF-8 keep their bytes
    (surrogateescape), so a dead-lettered copy carries the original key."""
    key = record.key.decode("utf-8", "surrogateescape") if record.key is not None else ""
    headers = tuple((name, value if value is not None else b"") for name, value in record.headers)
    return BusRecord(
        topic=record.topic,
        partition=record.partition,
        offset=record.offset,
        key=key,
        value=record.value,
        headers=headers,
        timestamp=record.timestamp / 1000,
    )


def commit_offsets(records: Sequence[BusRecord]) -> dict[TopicPartition, int]:
    """Per partition, the offset to commit for these records: the highest offset + 1."""
    ends: dict[TopicPartition, int] = {}
    for record in records:
        tp = TopicPartition(record.topic, record.partition)
        ends[tp] = max(ends.get(tp, 0), record.offset + 1)
    return ends


class _DrainOnRevoke(ConsumerRebalanceListener):  # type: ignore[misc]
    """aiokafka awaits these hooks inside the rebalance, before it gives partitions up."""

    def __init__(self, owner: KafkaConsumer) -> None:
        self._owner = owner

    async def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        await self._owner.drain(revoked)

    async def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        self._owner.assignments += 1
        log.info("assigned partitions: %s", sorted((tp.topic, tp.partition) for tp in assigned))


class KafkaConsumer:
    """Started on the first poll (joining the group then); `close` leaves the group."""

    def __init__(
        self,
        options: KafkaOptions,
        group_id: str,
        topics: Sequence[str],
        *,
        drain_timeout_s: float = 30.0,
        lag_log_interval_s: float = 30.0,
        session_timeout_ms: int = 10_000,
        client_id: str = "ragstream",
    ) -> None:
        if not group_id or not topics:
            raise ValueError("a consumer needs a group id and at least one topic")
        self.group_id = group_id
        self.topics = tuple(dict.fromkeys(topics))
        self._options = options
        self._extra = {
            "group_id": group_id,
            "client_id": client_id,
            "enable_auto_commit": False,
            "auto_offset_reset": "earliest",
            "isolation_level": "read_committed",
            "session_timeout_ms": session_timeout_ms,
        }
        self._login: SaslLogin | None = None
        """The login of the last consumer built (or tried)."""
        self._retry_at = 0.0
        self._retry_s = 0.0
        """While a new login is refused: when to try again, and the pause after that."""
        self._drain_timeout_s = drain_timeout_s
        self._lag_log_interval_s = lag_log_interval_s
        self._consumer: Any = None
        self._in_flight: dict[TopicPartition, int] = {}
        """Per partition, offset + 1 of the last polled record not committed yet."""
        self.assignments = 0
        """Assignments received so far (each rebalance brings one)."""
        self._polled_in: dict[TopicPartition, int] = {}
        """Per partition, the assignment its last polled records came from."""
        self._settled = asyncio.Event()
        self._settled.set()
        self._abandon_hooks: list[Callable[[], None]] = []
        self._lag_task: asyncio.Task[None] | None = None
        self._closed = False

    def on_abandon(self, hook: Callable[[], None]) -> None:
        """`hook` is called when a rebalance abandons the batch in flight; it should stop
        working on that batch (which it must then not commit) and poll again."""
        self._abandon_hooks.append(hook)

    async def _start(self) -> Any:
        if self._consumer is None:
            self._login = self._options.current_login()
            consumer = AIOKafkaConsumer(**self._options.client(**self._extra))
            # Subscribing after start: start() would otherwise wait for the first
            # assignment, however long the group takes, and a poll must keep its timeout.
            await start_or_explain(consumer, self._options, f"the consumer of {self.group_id}")
            consumer.subscribe(list(self.topics), listener=_DrainOnRevoke(self))
            self._consumer = consumer
            self._lag_task = asyncio.create_task(self._log_lag(), name="kafka-lag")
        return self._consumer

    async def _renewed(self) -> Any:
        """The consumer, rebuilt first if the login changed since it was built; None while
        a new login is refused (tried again after a pause, or once the login changes)."""
        login = self._options.current_login()
        if self._consumer is not None and login != self._login:
            log.info(
                "Kafka login changed (%s): the consumer of %s rejoins the group with it",
                self._options.login_settings(),
                self.group_id,
            )
            await self._stop_client()
            self._retry_s = 0.0
        if self._consumer is not None or not self._retry_s:
            return await self._start()
        if login == self._login and asyncio.get_running_loop().time() < self._retry_at:
            return None
        return await self._start()

    async def poll(self, max_records: int, timeout: float) -> list[BusRecord]:
        if self._closed:
            return []
        self._release_in_flight()
        try:
            consumer = await self._renewed()
        except KafkaUnavailableError as exc:
            # Opening the bus checked the login; this one was refused since (rotated on
            # the brokers before its file changed, or a wrong file): wait for the file.
            self._retry_s = min(MAX_RETRY_S, max(FIRST_RETRY_S, self._retry_s * 2))
            self._retry_at = asyncio.get_running_loop().time() + self._retry_s
            log.error("%s; trying again in %.0f s or when the login changes", exc, self._retry_s)
            consumer = None
        if consumer is None:
            await asyncio.sleep(timeout)
            return []
        self._retry_s = 0.0
        timeout = max(0.0, timeout)
        try:
            # getmany ignores its timeout while a rebalance is in progress; a poll must not
            # outlast its timeout, or shutdown would wait for the rebalance. Cancelling it is
            # safe: records are taken from the fetch buffer only right before it returns.
            async with asyncio.timeout(timeout + 0.05):
                batches = await consumer.getmany(
                    timeout_ms=int(timeout * 1000), max_records=max_records
                )
        except TimeoutError:
            return []
        records = [bus_record(r) for partition in batches.values() for r in partition]
        for tp, partition in batches.items():
            if partition:
                self._in_flight[tp] = partition[-1].offset + 1
                self._polled_in[tp] = self.assignments
        if self._in_flight:
            self._settled.clear()
        return records

    async def commit(self, records: Sequence[BusRecord]) -> None:
        """Commits for the partitions this member has owned since it polled the records.
        Records polled before a rebalance are not committed (the rebalance reset the
        positions to the committed offsets, so they are delivered again), nor is a commit
        the broker refuses because the group rebalanced meanwhile."""
        ends = commit_offsets(records)
        if not ends or self._consumer is None:
            return
        owned = self._consumer.assignment()
        offsets = {
            tp: end
            for tp, end in ends.items()
            if tp in owned and self._polled_in.get(tp) == self.assignments
        }
        if len(offsets) < len(ends):
            skipped = sorted(set(ends) - set(offsets))
            log.info("not committing partitions rebalanced since the poll: %s", skipped)
        try:
            if offsets:
                async with asyncio.timeout(COMMIT_TIMEOUT_S):
                    await self._consumer.commit(offsets)
        except (CommitFailedError, IllegalStateError) as exc:
            log.warning("commit refused (%s); the records will be delivered again", exc)
        except TimeoutError:
            # Offsets are cumulative: the next commit covers these records; if this member
            # loses the partitions first, their next owner processes them again.
            log.warning(
                "commit of %s not answered in %.0f s (group coordinator unreachable); going on",
                sorted(offsets),
                COMMIT_TIMEOUT_S,
            )
        for tp, end in ends.items():
            if self._in_flight.get(tp, end) <= end:
                self._in_flight.pop(tp, None)
        if not self._in_flight:
            self._settled.set()

    def _release_in_flight(self) -> None:
        self._in_flight.clear()
        self._settled.set()

    async def drain(self, revoked: set[TopicPartition]) -> None:
        """Waits until the batch in flight is done, abandoning it after `drain_timeout_s`."""
        if not revoked & self._in_flight.keys():
            return
        log.info("rebalance: finishing the batch in flight before giving up partitions")
        if await self._settle(self._drain_timeout_s):
            return
        log.warning(
            "rebalance: batch not finished after %.0f s; abandoning it uncommitted "
            "(its records go to the partitions' next owner)",
            self._drain_timeout_s,
        )
        for hook in self._abandon_hooks:
            hook()
        if not await self._settle(self._drain_timeout_s):
            log.error("rebalance: the abandoned batch did not stop; giving partitions up anyway")

    async def _settle(self, timeout: float) -> bool:
        try:
            async with asyncio.timeout(timeout):
                await self._settled.wait()
        except TimeoutError:
            return False
        return True

    async def lag(self) -> dict[PartitionKey, int]:
        """Per assigned partition, how many records the group has not committed yet."""
        if self._consumer is None or self._options.current_login() != self._login:
            return {}  # a client about to be rebuilt may hang on connections it cannot open
        assigned = sorted(self._consumer.assignment())
        if not assigned:
            return {}
        ends = await self._consumer.end_offsets(assigned)
        starts = await self._consumer.beginning_offsets(assigned)
        lag: dict[PartitionKey, int] = {}
        for tp in assigned:
            committed = await self._consumer.committed(tp)
            done = starts[tp] if committed is None else committed
            lag[(tp.topic, tp.partition)] = max(0, ends[tp] - done)
        return lag

    async def _log_lag(self) -> None:
        while True:
            await asyncio.sleep(self._lag_log_interval_s)
            try:
                lag = await self.lag()
            except KafkaError as exc:
                log.warning("consumer lag unavailable: %s", exc)
                continue
            log.info("consumer lag %d records %s", sum(lag.values()), lag)

    async def close(self) -> None:
        """Leaves the group; uncommitted records are delivered to the next owner."""
        if self._closed:
            return
        self._closed = True
        self._release_in_flight()
        await self._stop_client()

    async def _stop_client(self) -> None:
        consumer, self._consumer = self._consumer, None
        if self._lag_task is not None:
            self._lag_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lag_task
            self._lag_task = None
        if consumer is not None:
            await stop_consumer(consumer)
