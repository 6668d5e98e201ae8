"""The process's Kafka producer behind the Publisher protocol (aiokafka).

The producer is idempotent with acks=all, started on the first publish. It follows a
rotated login (kafka_login.py) without holding anything up:
- a publish that finds the login changed builds a new producer and uses it at once; the old
  one is retired: the publishes still on it finish there, and it stops after the last one;
- a publish waiting on a producer whose login has changed since (a send waits up to the
  request timeout, 40 s, for metadata a refused login never brings) gives up on it within
  LOGIN_CHECK_S and publishes again on the new one. The records may then be stored twice,
  which at-least-once delivery allows and every consumer makes harmless.
A failure the cluster reports (a timeout, an unknown topic) is raised as
KafkaUnavailableError, one line naming the cause, for the caller to retry.

Stopping a producer waits FLUSH_S for the records it still holds; a producer whose login is
refused never delivers them, and aiokafka's stop would wait for them forever. Those records
belong to publishes that were abandoned or never acknowledged to their caller, so failing
them loses nothing that was reported published.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError

from ragstream.common.bus.kafka_admin import KafkaUnavailableError, start_or_explain
from ragstream.common.bus.kafka_login import SaslLogin
from ragstream.common.bus.kafka_security import KafkaOptions
from ragstream.common.bus.protocols import OutgoingRecord

log = logging.getLogger(__name__)
MIN_REQUEST_BYTES = 1 << 20
LOGIN_CHECK_S = 0.5
"""How often a publish under way checks whether the login changed meanwhile."""
FLUSH_S = 5.0
"""How long stopping a producer waits for the records it still holds to be acknowledged."""


@dataclass(eq=False, slots=True)
class _Producer:
    client: Any
    login: SaslLogin | None
    """The login it was built with."""
    publishing: int = 0
    retired: bool = False


class KafkaPublisher:
    def __init__(
        self, options: KafkaOptions, *, max_request_bytes: int, client_id: str = "ragstream"
    ) -> None:
        self._options = options
        self._extra = {
            "client_id": client_id,
            "enable_idempotence": True,
            "acks": "all",
            "max_request_size": max(MIN_REQUEST_BYTES, max_request_bytes),
        }
        self._current: _Producer | None = None
        self._starting = asyncio.Lock()
        self._stopping: set[asyncio.Task[None]] = set()
        """Retired producers stopping in the background."""

    async def publish(self, topic: str, records: Sequence[OutgoingRecord]) -> None:
        """Sends in order and returns once all are acknowledged; raises if any failed
        (some may then be stored: at-least-once, like every retry)."""
        if not topic:
            raise ValueError("topic must not be empty")
        if not records:
            return
        while True:
            producer = await self._acquire()
            try:
                if await self._sent_unless_login_changes(producer, topic, records):
                    return
            finally:
                self._release(producer)
            log.info("Kafka login changed during a publish: publishing again with the new one")

    async def _acquire(self) -> _Producer:
        async with self._starting:
            login = self._options.current_login()
            current = self._current
            if current is not None and login != current.login:
                log.info(
                    "Kafka login changed (%s): the producer reconnects with it",
                    self._options.login_settings(),
                )
                self._current = None
                current.retired = True
                self._stop_when_idle(current)
            if self._current is None:
                client = AIOKafkaProducer(**self._options.client(**self._extra))
                await start_or_explain(client, self._options, "the producer")
                self._current = _Producer(client, login)
            self._current.publishing += 1
            return self._current

    def _release(self, producer: _Producer) -> None:
        producer.publishing -= 1
        self._stop_when_idle(producer)

    def _stop_when_idle(self, producer: _Producer) -> None:
        if producer.retired and not producer.publishing:
            task = asyncio.create_task(_stop(producer.client), name="kafka-producer-stop")
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def _sent_unless_login_changes(
        self, producer: _Producer, topic: str, records: Sequence[OutgoingRecord]
    ) -> bool:
        """True once every record is acknowledged; False if the login changed first."""
        sending = asyncio.ensure_future(_send(producer.client, topic, records))
        try:
            while True:
                done, _ = await asyncio.wait({sending}, timeout=LOGIN_CHECK_S)
                if done:
                    sending.result()
                    return True
                if self._options.current_login() != producer.login:
                    return False
        except KafkaError as exc:
            raise KafkaUnavailableError(
                f"publishing to {topic} failed: {type(exc).__name__}: {exc}"
            ) from None
        finally:
            if not sending.done():
                sending.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await sending

    async def close(self) -> None:
        """Flushes what is buffered and disconnects."""
        current, self._current = self._current, None
        if current is not None:
            await _stop(current.client)
        if self._stopping:
            await asyncio.gather(*self._stopping, return_exceptions=True)


async def _send(client: Any, topic: str, records: Sequence[OutgoingRecord]) -> None:
    acks = [
        await client.send(
            topic,
            record.value,
            key=record.key.encode("utf-8", "surrogateescape"),
            headers=list(record.headers),
        )
        for record in records
    ]
    await asyncio.gather(*acks)


async def _stop(client: Any) -> None:
    """Stops an aiokafka producer, failing what it cannot deliver within FLUSH_S."""
    stopping = asyncio.ensure_future(client.stop())
    done, _ = await asyncio.wait({stopping}, timeout=FLUSH_S)
    if not done:
        # aiokafka offers no stop without the flush; failing the batches ends the flush.
        unsent = KafkaConnectionError("the producer stopped before Kafka acknowledged them")
        client._message_accumulator.fail_all(unsent)
    await stopping
