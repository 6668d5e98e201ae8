"""Opens the configured event bus: a name-to-factory map."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ragstream.common.bus.protocols import Consumer, Publisher
from ragstream.common.bus.sqlite_log import SqliteEventLog
from ragstream.common.config import ConfigError, Settings
from ragstream.common.storage.factory import EmbeddedDatabase


@dataclass
class Bus:
    publisher: Publisher
    consumer: Callable[[str, Sequence[str]], Consumer]
    """Makes a consumer for (group id, topics)."""


async def _sqlite_bus(settings: Settings, db: EmbeddedDatabase) -> Bus:
    log = await SqliteEventLog.open(await db.get())
    return Bus(publisher=log, consumer=log.consumer)


BUS_BACKENDS: dict[str, Callable[[Settings, EmbeddedDatabase], Awaitable[Bus]]] = {
    "sqlite": _sqlite_bus,
}


async def open_bus(settings: Settings, db: EmbeddedDatabase) -> Bus:
    factory = BUS_BACKENDS.get(settings.bus.backend)
    if factory is None:
        raise ConfigError(f"bus.backend={settings.bus.backend!r} is not available in this build")
    return await factory(settings, db)
