"""The one backend registry: configuration names become opened stores, bus and providers.

Each role has one small name-to-factory map: `DATA_BACKENDS` (`storage.search`: the search
store and, in the same backend, documents, mentions and the LLM cache), `GRAPH_BACKENDS`
(`storage.graph`) and `BUS_BACKENDS` (`bus.backend`); the providers are built by their own
modules from their config sections. `open_backends` opens everything the settings name,
once per process, and closes it in reverse order. Both services' mains
(`ragstream.indexer.main`, `ragstream.query.main`) are wired from the `Backends` it yields;
nothing below them looks at a backend name again.

Server backends are imported inside their factories, so the embedded deployment never loads
the Elasticsearch, Kafka or NebulaGraph clients.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from ragstream.common.bus.protocols import Bus
from ragstream.common.bus.topics import Topics
from ragstream.common.config import ConfigError, Settings
from ragstream.common.providers.embedding import Embedder, build_embedder
from ragstream.common.providers.llm import ChatModel, build_chat_model
from ragstream.common.providers.rerank import Reranker, build_reranker
from ragstream.common.providers.scheduler import EmbeddingScheduler
from ragstream.common.storage.protocols import DataStores, GraphStore, Stores
from ragstream.common.storage.sqlite.db import Database


@dataclass(frozen=True, slots=True)
class Providers:
    embeddings: EmbeddingScheduler
    """Shared by every stage; each gets a view with its own priority."""
    chat: ChatModel | None
    """None without an LLM: extraction is the NLP extractor, answers are extractive."""
    reranker: Reranker | None = None
    """None without a reranker: the query pipeline skips reranking and says so."""


@dataclass(frozen=True, slots=True)
class Backends:
    """Everything a process opened from its settings."""

    stores: Stores
    bus: Bus
    providers: Providers
    topics: Topics


class Opening:
    """What a factory may use: the settings, the process's exit stack (a factory registers
    the close of a connection it shares between stores), the embedder whose vectors the
    stores will hold, and the embedded database of the data directory (opened on first
    use, once)."""

    def __init__(
        self, settings: Settings, stack: contextlib.AsyncExitStack, embedder: Embedder
    ) -> None:
        self.settings = settings
        self.stack = stack
        self.embedder = embedder
        self._db: Database | None = None

    async def database(self) -> Database:
        if self._db is None:
            self.settings.data_dir.mkdir(parents=True, exist_ok=True)
            self._db = await self.stack.enter_async_context(
                await Database.open(
                    self.settings.data_dir,
                    reader_threads=self.settings.storage.reader_threads,
                    scan_threads=self.settings.storage.scan_threads,
                )
            )
        return self._db


async def _sqlite_data(opening: Opening) -> DataStores:
    from ragstream.common.storage.sqlite import open_embedded_stores

    return await open_embedded_stores(
        await opening.database(), opening.settings.storage.approximate_from
    )


async def _elastic_data(opening: Opening) -> DataStores:
    from ragstream.common.storage.elastic.backend import open_elastic_stores

    cfg = opening.settings.elasticsearch
    return await open_elastic_stores(cfg, opening.embedder, opening.stack)


async def _sqlite_graph(opening: Opening) -> GraphStore:
    from ragstream.common.storage.sqlite.graph import SqliteGraphStore

    return await SqliteGraphStore.open(await opening.database())


async def _nebula_graph(opening: Opening) -> GraphStore:
    from ragstream.common.storage.nebula import NebulaGraphStore

    return await NebulaGraphStore.open(opening.settings.nebula)


async def _sqlite_bus(opening: Opening) -> Bus:
    from ragstream.common.bus.sqlite_log import open_sqlite_bus
    from ragstream.common.bus.sqlite_records import Membership

    settings = opening.settings
    member = Membership(settings.bus.member, settings.indexer.processes)
    return await open_sqlite_bus(
        await opening.database(), partitions=settings.bus.partitions, member=member
    )


async def _kafka_bus(opening: Opening) -> Bus:
    from ragstream.common.bus.kafka import open_kafka_bus

    return await open_kafka_bus(opening.settings)


T = TypeVar("T")
Factory = Callable[[Opening], Awaitable[T]]
DATA_BACKENDS: dict[str, Factory[DataStores]] = {
    "sqlite": _sqlite_data,
    "elasticsearch": _elastic_data,
}
GRAPH_BACKENDS: dict[str, Factory[GraphStore]] = {
    "sqlite": _sqlite_graph,
    "nebula": _nebula_graph,
}
BUS_BACKENDS: dict[str, Factory[Bus]] = {
    "sqlite": _sqlite_bus,
    "kafka": _kafka_bus,
}


def pick(backends: dict[str, T], name: str, setting: str) -> T:
    """The factory registered under `name`; a ConfigError naming the setting otherwise."""
    try:
        return backends[name]
    except KeyError:
        raise ConfigError(
            f"{setting}={name!r} is not available in this build "
            f"(available: {', '.join(sorted(backends))})"
        ) from None


def open_providers(settings: Settings, stack: contextlib.AsyncExitStack) -> Providers:
    """The embedding scheduler, the LLM and the reranker the settings name."""
    embeddings = EmbeddingScheduler(build_embedder(settings.embedding), settings.embedding)
    stack.push_async_callback(embeddings.close)
    reranker = build_reranker(settings.rerank)
    if reranker is not None:
        stack.push_async_callback(reranker.close)
    chat = build_chat_model(settings.llm)
    if chat is not None:
        stack.push_async_callback(chat.close)
    return Providers(embeddings, chat, reranker)


async def open_stores(opening: Opening) -> Stores:
    """Every store role; each store's close runs with the exit stack."""
    settings = opening.settings
    data = await pick(DATA_BACKENDS, settings.storage.search, "storage.search")(opening)
    for store in (data.search, data.docs, data.mentions, data.cache, data.communities):
        opening.stack.push_async_callback(store.close)
    graph = await pick(GRAPH_BACKENDS, settings.storage.graph, "storage.graph")(opening)
    opening.stack.push_async_callback(graph.close)
    return Stores.of(data, graph)


@contextlib.asynccontextmanager
async def open_backends(settings: Settings) -> AsyncIterator[Backends]:
    """Opens every backend the settings name; closes them on exit, in reverse order."""
    async with contextlib.AsyncExitStack() as stack:
        providers = open_providers(settings, stack)
        opening = Opening(settings, stack, providers.embeddings)
        stores = await open_stores(opening)
        bus = await pick(BUS_BACKENDS, settings.bus.backend, "bus.backend")(opening)
        stack.push_async_callback(bus.close)
        yield Backends(stores, bus, providers, Topics(settings.bus.topic_prefix))
