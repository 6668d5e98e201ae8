"""The query service, put together: the engine from the process's `Backends`, the servicers
over it, the gate every call passes, the gRPC server and, when asked for, the HTTP/JSON port
with the web console (docs/architecture.md, "Query"). Both transports share the servicers
and the gate, so they answer and refuse alike."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from ragstream.common.bus.progress import Progress, indexing_progress
from ragstream.common.config import Settings
from ragstream.common.health import HealthServer
from ragstream.common.listen import check_listen, parse_listen
from ragstream.common.providers.forecast import Forecast
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import Backends
from ragstream.common.text.analyzer import preload_segmenter
from ragstream.query.community_api import CommunityReader
from ragstream.query.engine import QueryEngine
from ragstream.query.graph_api import GraphReader
from ragstream.query.reranking import RerankGauge, Reranking
from ragstream.query.transport.auth import (
    build_authenticator,
    server_credentials,
    server_ssl_context,
    warn_if_exposed,
)
from ragstream.query.transport.gate import Gate, admissions
from ragstream.query.transport.graph import GraphServicer
from ragstream.query.transport.http.browser import Hosts
from ragstream.query.transport.http.routes import build_routes
from ragstream.query.transport.http.server import HttpServer, build_app
from ragstream.query.transport.ingest import IngestServicer
from ragstream.query.transport.interceptors import GrpcGate
from ragstream.query.transport.server import GrpcServer
from ragstream.query.transport.service import QueryServicer
from ragstream.query.transport.validation import Limits

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Servicers:
    """One servicer per service, shared by the gRPC server and the HTTP port."""

    query: QueryServicer
    ingest: IngestServicer
    graph: GraphServicer

    def by_service(self) -> dict[str, object]:
        return {
            "QueryService": self.query,
            "IngestService": self.ingest,
            "GraphService": self.graph,
        }


def build_engine(settings: Settings, backends: Backends) -> QueryEngine:
    preload_segmenter()  # a Chinese question must not load jieba on the event loop
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


def build_servicers(settings: Settings, backends: Backends) -> Servicers:
    async def progress(workspace: str | None) -> Progress:
        return await indexing_progress(
            backends.bus, backends.topics, settings.bus.group_id, workspace
        )

    stores = backends.stores
    embedder = backends.providers.embeddings.view(Priority.QUERY)
    reader = GraphReader(stores.search, stores.graph, embedder, settings.query)
    return Servicers(
        query=QueryServicer(build_engine(settings, backends), settings.query, settings.workspace),
        ingest=IngestServicer(
            backends.bus.publisher,
            backends.topics.documents,
            stores.docs,
            settings.workspace,
            progress=progress,
        ),
        graph=GraphServicer(
            reader, settings.workspace, CommunityReader(stores.communities, stores.graph)
        ),
    )


def build_gate(settings: Settings, forecast: Forecast | None = None) -> Gate:
    """Authentication, request rules, tenancy, admission and deadlines for every call; the
    queries that will embed are announced to `forecast` (the embedding scheduler's)."""
    server = settings.server
    return Gate(
        Limits(max_document_bytes=settings.indexer.max_document_bytes),
        settings.workspace,
        build_authenticator(settings.auth),
        admissions(
            queries=(server.max_concurrent_queries, server.max_queued_queries),
            publishes=(server.max_concurrent_publishes, server.max_queued_publishes),
        ),
        forecast,
    )


def build_server(
    settings: Settings,
    backends: Backends,
    listen: str,
    servicers: Servicers | None = None,
    gate: Gate | None = None,
) -> GrpcServer:
    servicers = servicers or build_servicers(settings, backends)
    warn_if_exposed(listen, settings.auth)
    return GrpcServer(
        listen,
        servicers.query,
        servicers.ingest,
        settings.server.max_message_mb,
        graph=servicers.graph,
        interceptors=[
            GrpcGate(gate or build_gate(settings, backends.providers.embeddings.forecast))
        ],
        credentials=server_credentials(settings.auth),
    )


def build_http_server(
    settings: Settings, servicers: Servicers, gate: Gate, listen: str
) -> HttpServer:
    """The HTTP/JSON routes and the console over the same servicers and gate; an address
    that cannot be listened on is a ListenError here, before anything starts."""
    check_listen(listen)
    warn_if_exposed(listen, settings.auth)
    app = build_app(
        build_routes(servicers.by_service()),
        gate,
        settings.server.http_cors_origins,
        settings.server.max_message_mb,
        Hosts.of(parse_listen(listen)[0], settings.server.http_allowed_hosts),
    )
    return HttpServer(listen, app, server_ssl_context(settings.auth))


def build_servers(
    settings: Settings, backends: Backends, listen: str, http_listen: str | None = None
) -> tuple[GrpcServer, HttpServer | None]:
    """The gRPC server (bound) and, when `http_listen` or server.http_listen names an
    address, the HTTP/JSON port, over one set of servicers and one gate."""
    servicers = build_servicers(settings, backends)
    gate = build_gate(settings, backends.providers.embeddings.forecast)
    server = build_server(settings, backends, listen, servicers, gate)
    http_listen = http_listen or settings.server.http_listen
    http = build_http_server(settings, servicers, gate, http_listen) if http_listen else None
    return server, http


async def serve_until(
    server: GrpcServer,
    listen: str,
    stop: asyncio.Event,
    health: HealthServer | None = None,
    http: HttpServer | None = None,
) -> None:
    """Starts a built (so already bound) server, and the health and HTTP ports if any, and
    serves until `stop`, then reports NOT_SERVING and drains the calls in flight.

    With `health`, grpc.health.v1 is also served on its port, in plaintext and without a
    token, for probes that cannot speak the main port's TLS (the kubelet's gRPC probe)."""
    await server.start()
    print(f"ragstream serving on {listen} (port {server.port})", flush=True)
    if health is not None:
        await health.start()
        print(f"ragstream health on port {health.port}", flush=True)
    if http is not None:
        await http.start()
        print(f"ragstream HTTP/JSON and console on port {http.port}", flush=True)
    try:
        await stop.wait()
        log.info("shutting down")
    finally:
        if health is not None:
            await health.stop(grace_s=0)  # NOT_SERVING on both ports before the drain
        if http is not None:
            await http.stop()
        await server.stop()
