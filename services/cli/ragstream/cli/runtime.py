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
from typing import Any

from ragstream.cli.wiring import (
    MERGE_GROUP_SUFFIX,
    Providers,
    build_engine,
    build_stage_consumers,
)
from ragstream.common.bus.factory import Bus, open_bus
from ragstream.common.bus.kafka_consumer import KafkaConsumer
from ragstream.common.bus.topics import Topics
from ragstream.common.config import Settings
from ragstream.common.providers.embedding import build_embedder
from ragstream.common.providers.llm import build_chat_model
from ragstream.common.providers.rerank import build_reranker
from ragstream.common.providers.scheduler import EmbeddingScheduler
from ragstream.common.storage.factory import EmbeddedDatabase, open_stores
from ragstream.common.telemetry import telemetry_session
from ragstream.indexer.consumer import KeyedConsumer
from ragstream.query.stages.context import QueryStores
from ragstream.query.transport.auth import build_authenticator, server_credentials, warn_if_exposed
from ragstream.query.transport.ingest import IngestServicer
from ragstream.query.transport.interceptors import Gate, admissions
from ragstream.query.transport.server import GrpcServer
from ragstream.query.transport.service import QueryServicer
from ragstream.query.transport.validation import Limits

log = logging.getLogger(__name__)


@dataclass
class Backends:
    stores: QueryStores
    bus: Bus
    providers: Providers
    topics: Topics


@contextlib.asynccontextmanager
async def open_backends(settings: Settings) -> AsyncIterator[Backends]:
    """Opens every backend the settings name; closes them on exit, in reverse order."""
    async with contextlib.AsyncExitStack() as stack:
        db = EmbeddedDatabase(settings, stack)
        stores = await open_stores(settings, db)
        for store in (stores.search, stores.docs, stores.mentions, stores.cache, stores.graph):
            stack.push_async_callback(store.close)
        bus = await open_bus(settings, db)
        stack.push_async_callback(bus.close)
        embeddings = EmbeddingScheduler(build_embedder(settings.embedding), settings.embedding)
        stack.push_async_callback(embeddings.close)
        reranker = build_reranker(settings.rerank)
        if reranker is not None:
            stack.push_async_callback(reranker.close)
        chat = build_chat_model(settings.llm)
        if chat is not None:
            stack.push_async_callback(chat.close)
        yield Backends(
            stores=QueryStores(
                stores.search, stores.graph, stores.mentions, stores.docs, stores.cache
            ),
            bus=bus,
            providers=Providers(embeddings, chat, reranker),
            topics=Topics(settings.bus.topic_prefix),
        )


def build_server(settings: Settings, backends: Backends, listen: str) -> GrpcServer:
    engine = build_engine(settings, backends.stores, backends.providers)
    query = QueryServicer(engine, settings.query, settings.workspace)
    ingest = IngestServicer(
        backends.bus.publisher,
        backends.topics.documents,
        backends.stores.docs,
        settings.workspace,
        progress=lambda: indexing_progress(settings, backends),
    )
    warn_if_exposed(listen, settings.auth)
    return GrpcServer(
        listen,
        query,
        ingest,
        settings.server.max_message_mb,
        interceptors=[build_gate(settings)],
        credentials=server_credentials(settings.auth),
    )


def build_gate(settings: Settings) -> Gate:
    """Authentication, request rules, tenancy, admission and deadlines for every call."""
    server = settings.server
    return Gate(
        Limits(max_document_bytes=settings.indexer.max_document_bytes),
        settings.workspace,
        build_authenticator(settings.auth),
        admissions(
            queries=(server.max_concurrent_queries, server.max_queued_queries),
            publishes=(server.max_concurrent_publishes, server.max_queued_publishes),
        ),
    )


async def indexing_progress(settings: Settings, backends: Backends) -> tuple[int, int]:
    """(document events, graph merges) the indexer's consumer groups have not committed."""
    group, topics = settings.bus.group_id, backends.topics
    documents = await backends.bus.pending(group, [topics.documents])
    merges = await backends.bus.pending(group + MERGE_GROUP_SUFFIX, [topics.graph_merge])
    return documents, merges


async def run_stages(settings: Settings, backends: Backends, stop: asyncio.Event) -> None:
    """Both indexing stages until `stop`; each finishes its batch, commits and closes."""
    stages = build_stage_consumers(
        settings, backends.stores, backends.bus, backends.providers, backends.topics
    )
    try:
        async with asyncio.TaskGroup() as group:
            for stage in stages:
                abandon_on_rebalance(stage)
                group.create_task(stage.run(stop))
    finally:
        for stage in stages:
            await stage.close()


def abandon_on_rebalance(keyed: KeyedConsumer[Any]) -> None:
    """A Kafka group member abandons its batch when a rebalance cannot wait for it."""
    if isinstance(keyed.consumer, KafkaConsumer):
        keyed.consumer.on_abandon(keyed.abandon_in_flight)


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop


async def serve(settings: Settings, listen: str, with_indexer: bool = True) -> None:
    """Runs the gRPC server (and the indexer) until SIGINT or SIGTERM, then drains."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    telemetry = telemetry_session("ragstream", settings.bus.backend)
    async with telemetry, open_backends(settings) as backends:
        server = build_server(settings, backends, listen)
        await server.start()
        print(f"ragstream serving on {listen} (port {server.port})", flush=True)
        async with asyncio.TaskGroup() as group:
            if with_indexer:
                group.create_task(run_stages(settings, backends, stop))
            await stop.wait()
            log.info("shutting down")
            await server.stop()


async def run_indexer(settings: Settings, health_listen: str) -> None:
    """The indexer alone (`ragstream indexer`), one member of the consumer group.

    SIGINT or SIGTERM stops fetching; the batch in flight is finished and committed (a
    record still failing stays uncommitted for the next owner), then the process leaves the
    group and exits. grpc.health.v1 answers on `health_listen` meanwhile.
    """
    stop = stop_on_signals()
    telemetry = telemetry_session("ragstream-indexer", settings.bus.backend)
    async with telemetry, open_backends(settings) as backends:
        health = GrpcServer(health_listen, None, None, settings.server.max_message_mb)
        await health.start()
        print(f"ragstream indexer health on {health_listen} (port {health.port})", flush=True)
        try:
            await run_stages(settings, backends, stop)
            log.info("indexer stopped; leaving the consumer group")
        finally:
            await health.stop(grace_s=1.0)
