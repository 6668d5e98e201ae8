"""Wires the configured backends and runs the long-lived processes (`serve`, `indexer`).

The one place where configuration names become objects: a small name-to-factory map per
role. Everything below receives objects and never looks at the configuration again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ragstream.common.bus.factory import open_bus
from ragstream.common.bus.protocols import Consumer, Publisher
from ragstream.common.bus.topics import Topics
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange
from ragstream.common.providers.embedding import Embedder, build_embedder
from ragstream.common.providers.llm import ChatModel, build_chat_model
from ragstream.common.storage.factory import EmbeddedDatabase, open_stores
from ragstream.common.storage.protocols import DocumentStore, SearchStore
from ragstream.indexer.consumer import KeyedConsumer, document_consumer
from ragstream.indexer.pipeline import DocumentIndexer
from ragstream.query.engine import QueryEngine
from ragstream.query.ingest import IngestServicer
from ragstream.query.server import GrpcServer
from ragstream.query.service import QueryServicer

log = logging.getLogger(__name__)


@dataclass
class Backends:
    search: SearchStore
    docs: DocumentStore
    publisher: Publisher
    consumer: Consumer
    embedder: Embedder
    chat: ChatModel | None
    topics: Topics


@contextlib.asynccontextmanager
async def open_backends(settings: Settings) -> AsyncIterator[Backends]:
    """Opens every backend the settings name; closes them on exit."""
    topics = Topics(settings.bus.topic_prefix)
    async with contextlib.AsyncExitStack() as stack:
        db = EmbeddedDatabase(settings, stack)
        stores = await open_stores(settings, db)
        bus = await open_bus(settings, db)
        consumer = bus.consumer(settings.bus.group_id, [topics.documents])
        stack.push_async_callback(consumer.close)
        embedder = build_embedder(settings.embedding)
        stack.push_async_callback(embedder.close)
        chat = build_chat_model(settings.llm)
        if chat is not None:
            stack.push_async_callback(chat.close)
        yield Backends(
            search=stores.search,
            docs=stores.docs,
            publisher=bus.publisher,
            consumer=consumer,
            embedder=embedder,
            chat=chat,
            topics=topics,
        )


def build_server(settings: Settings, backends: Backends, listen: str) -> GrpcServer:
    engine = QueryEngine(
        backends.search,
        backends.embedder,
        backends.chat,
        candidates=settings.query.candidates,
        rrf_k=settings.query.rrf_k,
    )
    query = QueryServicer(engine, settings.query, settings.workspace)
    ingest = IngestServicer(
        backends.publisher,
        backends.topics.documents,
        backends.docs,
        settings.workspace,
        settings.indexer.max_document_bytes,
    )
    return GrpcServer(listen, query, ingest, settings.server.max_message_mb)


def build_consumer(settings: Settings, backends: Backends) -> KeyedConsumer[DocumentChange]:
    indexer = DocumentIndexer(backends.docs, backends.search, backends.embedder, settings.chunking)
    return document_consumer(
        backends.consumer,
        backends.publisher,
        backends.topics.documents_dlt,
        indexer.apply,
        settings.indexer,
    )


async def serve(settings: Settings, listen: str, with_indexer: bool = True) -> None:
    """Runs the gRPC server (and the indexer) until SIGINT or SIGTERM, then drains."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with open_backends(settings) as backends:
        server = build_server(settings, backends, listen)
        await server.start()
        print(f"ragstream serving on {listen} (port {server.port})", flush=True)
        async with asyncio.TaskGroup() as group:
            if with_indexer:
                group.create_task(build_consumer(settings, backends).run(stop))
            await stop.wait()
            log.info("shutting down")
            await server.stop()
