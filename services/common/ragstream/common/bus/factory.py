"""Opens the configured event bus: a name-to-factory map."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ragstream.common.bus.protocols import Consumer, Publisher
from ragstream.common.bus.sqlite_log import SqliteEventLog
from ragstream.common.config import ConfigError, Settings
from ragstream.common.storage.factory import EmbeddedDatabase


async def _nothing_to_close() -> None:
    return None


@dataclass
class Bus:
    publisher: Publisher
    consumer: Callable[[str, Sequence[str]], Consumer]
    """Makes a consumer for (group id, topics)."""
    pending: Callable[[str, Sequence[str]], Awaitable[int]]
    """Records of (topics) a consumer group (group id) has not committed yet."""
    close: Callable[[], Awaitable[None]] = _nothing_to_close
    """Releases the bus's connections (after the consumers it made are closed)."""


async def _sqlite_bus(settings: Settings, db: EmbeddedDatabase) -> Bus:
    log = await SqliteEventLog.open(await db.get())

    async def pending(group_id: str, topics: Sequence[str]) -> int:
        return sum((await log.lag(group_id, topics)).values())

    return Bus(publisher=log, consumer=log.consumer, pending=pending)


async def _kafka_bus(settings: Settings, db: EmbeddedDatabase) -> Bus:
    from ragstream.common.bus.kafka import KafkaBus
    from ragstream.common.bus.kafka_progress import group_lag

    bus = await KafkaBus.open(settings.bus, settings.indexer.max_document_bytes)

    async def pending(group_id: str, topics: Sequence[str]) -> int:
        return await group_lag(settings.bus.kafka_bootstrap, group_id, topics)

    return Bus(publisher=bus.publisher, consumer=bus.consumer, pending=pending, close=bus.close)


BUS_BACKENDS: dict[str, Callable[[Settings, EmbeddedDatabase], Awaitable[Bus]]] = {
    "sqlite": _sqlite_bus,
    "kafka": _kafka_bus,
}


async def open_bus(settings: Settings, db: EmbeddedDatabase) -> Bus:
    factory = BUS_BACKENDS.get(settings.bus.backend)
    if factory is None:
        raise ConfigError(f"bus.backend={settings.bus.backend!r} is not available in this build")
    return await factory(settings, db)
