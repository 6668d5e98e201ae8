"""Opens the configured storage backends: one name-to-factory map per role.

The embedded backends share one SQLite database per data directory; it is opened once,
on first use, and closed with the exit stack.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from ragstream.common.config import ConfigError, Settings
from ragstream.common.storage.protocols import (
    CacheStore,
    DocumentStore,
    GraphStore,
    MentionStore,
    SearchStore,
)
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.documents import SqliteDocumentStore
from ragstream.common.storage.sqlite.graph import SqliteGraphStore
from ragstream.common.storage.sqlite.mentions import SqliteCacheStore, SqliteMentionStore
from ragstream.common.storage.sqlite.search import SqliteSearchStore


class EmbeddedDatabase:
    """The data directory's SQLite database, opened on first use."""

    def __init__(self, settings: Settings, stack: contextlib.AsyncExitStack) -> None:
        self._settings = settings
        self._stack = stack
        self._db: Database | None = None

    async def get(self) -> Database:
        if self._db is None:
            self._settings.data_dir.mkdir(parents=True, exist_ok=True)
            self._db = await self._stack.enter_async_context(
                await Database.open(self._settings.data_dir)
            )
        return self._db


@dataclass
class Stores:
    search: SearchStore
    docs: DocumentStore
    mentions: MentionStore
    cache: CacheStore
    graph: GraphStore
    """Opened from storage.graph; a server backend's store must be closed (`close()`)."""


async def _sqlite_search(settings: Settings, db: EmbeddedDatabase) -> SearchStore:
    return await SqliteSearchStore.open(await db.get())


async def _sqlite_docs(settings: Settings, db: EmbeddedDatabase) -> DocumentStore:
    return await SqliteDocumentStore.open(await db.get())


async def _sqlite_mentions(settings: Settings, db: EmbeddedDatabase) -> MentionStore:
    return await SqliteMentionStore.open(await db.get())


async def _sqlite_cache(settings: Settings, db: EmbeddedDatabase) -> CacheStore:
    return await SqliteCacheStore.open(await db.get())


async def _elastic_search(settings: Settings, db: EmbeddedDatabase) -> SearchStore:
    # Imported here so the embedded deployment never loads the Elasticsearch client.
    from ragstream.common.storage.elastic.backend import open_search_store

    return await open_search_store(settings)


async def _elastic_docs(settings: Settings, db: EmbeddedDatabase) -> DocumentStore:
    from ragstream.common.storage.elastic.backend import open_document_store

    return await open_document_store(settings)


async def _elastic_mentions(settings: Settings, db: EmbeddedDatabase) -> MentionStore:
    from ragstream.common.storage.elastic.backend import open_mention_store

    return await open_mention_store(settings)


async def _elastic_cache(settings: Settings, db: EmbeddedDatabase) -> CacheStore:
    from ragstream.common.storage.elastic.backend import open_cache_store

    return await open_cache_store(settings)


async def _sqlite_graph(settings: Settings, db: EmbeddedDatabase) -> GraphStore:
    return await SqliteGraphStore.open(await db.get())


async def _nebula_graph(settings: Settings, db: EmbeddedDatabase) -> GraphStore:
    # Imported here so the embedded deployment never loads nebula3.
    from ragstream.common.storage.nebula import NebulaGraphStore

    return await NebulaGraphStore.open(settings.nebula)


T = TypeVar("T")
SEARCH_BACKENDS: dict[str, Callable[[Settings, EmbeddedDatabase], Awaitable[SearchStore]]] = {
    "sqlite": _sqlite_search,
    "elasticsearch": _elastic_search,
}
DOCUMENT_BACKENDS: dict[str, Callable[[Settings, EmbeddedDatabase], Awaitable[DocumentStore]]] = {
    "sqlite": _sqlite_docs,
    "elasticsearch": _elastic_docs,
}
MENTION_BACKENDS: dict[str, Callable[[Settings, EmbeddedDatabase], Awaitable[MentionStore]]] = {
    "sqlite": _sqlite_mentions,
    "elasticsearch": _elastic_mentions,
}
CACHE_BACKENDS: dict[str, Callable[[Settings, EmbeddedDatabase], Awaitable[CacheStore]]] = {
    "sqlite": _sqlite_cache,
    "elasticsearch": _elastic_cache,
}
GRAPH_BACKENDS: dict[str, Callable[[Settings, EmbeddedDatabase], Awaitable[GraphStore]]] = {
    "sqlite": _sqlite_graph,
    "nebula": _nebula_graph,
}


def _pick(backends: dict[str, T], name: str, setting: str) -> T:
    try:
        return backends[name]
    except KeyError:
        raise ConfigError(
            f"{setting}={name!r} is not available in this build "
            f"(available: {', '.join(sorted(backends))})"
        ) from None


async def open_stores(settings: Settings, db: EmbeddedDatabase) -> Stores:
    """The stores the settings name; every non-graph role lives in storage.search's backend."""
    backend = settings.storage.search
    return Stores(
        search=await _pick(SEARCH_BACKENDS, backend, "storage.search")(settings, db),
        docs=await _pick(DOCUMENT_BACKENDS, backend, "storage.search")(settings, db),
        mentions=await _pick(MENTION_BACKENDS, backend, "storage.search")(settings, db),
        cache=await _pick(CACHE_BACKENDS, backend, "storage.search")(settings, db),
        graph=await _pick(GRAPH_BACKENDS, settings.storage.graph, "storage.graph")(settings, db),
    )
