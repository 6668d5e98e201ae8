"""The query service, put together: the engine from the process's `Backends`, the gRPC
servicers over it, and the gate every call passes (docs/architecture.md, "Query")."""

from __future__ import annotations

import asyncio
import logging

from ragstream.common.bus.progress import Progress, indexing_progress
from ragstream.common.config import Settings
from ragstream.common.health import HealthServer
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import Backends
from ragstream.query.engine import QueryEngine
from ragstream.query.stages.rerank import RerankGauge, Reranking
from ragstream.query.transport.auth import (
    build_authenticator,
    server_credentials,
    warn_if_exposed,
)
from ragstream.query.transport.ingest import IngestServicer
from ragstream.query.transport.interceptors import Gate, admissions
from ragstream.query.transport.server import GrpcServer
from ragstream.query.transport.service import QueryServicer
from ragstream.query.transport.validation import Limits

log = logging.getLogger(__name__)


def build_engine(settings: Settings, backends: Backends) -> QueryEngine:
    providers = backends.providers
    reranking = None
    if providers.reranker is not None:
        reranking = Reranking(providers.reranker, settings.rerank, RerankGauge())
    return QueryEngine(
        backends.stores,
        providers.embeddings.view(Priority.QUERY),
        providers.chat,
        candidates=settings.query.candidates,
        rrf_k=settings.query.rrf_k,
        reranking=reranking,
        rewrite_min_seconds=settings.query.rewrite_min_seconds,
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


def build_server(settings: Settings, backends: Backends, listen: str) -> GrpcServer:
    async def progress(workspace: str | None) -> Progress:
        return await indexing_progress(
            backends.bus, backends.topics, settings.bus.group_id, workspace
        )

    query = QueryServicer(build_engine(settings, backends), settings.query, settings.workspace)
    ingest = IngestServicer(
        backends.bus.publisher,
        backends.topics.documents,
        backends.stores.docs,
        settings.workspace,
        progress=progress,
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


async def serve_until(
    server: GrpcServer, listen: str, stop: asyncio.Event, health: HealthServer | None = None
) -> None:
    """Starts a built (so already bound) server and serves until `stop`, then reports
    NOT_SERVING and drains the calls in flight.

    With `health`, grpc.health.v1 is also served on its port, in plaintext and without a
    token, for probes that cannot speak the main port's TLS (the kubelet's gRPC probe)."""
    await server.start()
    print(f"ragstream serving on {listen} (port {server.port})", flush=True)
    if health is not None:
        await health.start()
        print(f"ragstream health on port {health.port}", flush=True)
    try:
        await stop.wait()
        log.info("shutting down")
    finally:
        if health is not None:
            await health.stop(grace_s=0)  # NOT_SERVING on both ports before the drain
        await server.stop()
