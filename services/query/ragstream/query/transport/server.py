"""The gRPC server: QueryService, IngestService, GraphService, grpc.health.v1 and server
reflection (v1 and v1alpha)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from ragstream.common.listen import SERVER_OPTIONS, bind
from ragstream.query.transport import reflection
from ragstream.query.transport.graph import GraphServicer
from ragstream.query.transport.ingest import IngestServicer
from ragstream.query.transport.service import QueryServicer
from ragstream.query.transport.tracing import TracingInterceptor
from ragstream.v1 import (
    graph_pb2,
    graph_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    query_pb2,
    query_pb2_grpc,
)

log = logging.getLogger(__name__)
SERVICE_NAMES = (
    query_pb2.DESCRIPTOR.services_by_name["QueryService"].full_name,
    ingest_pb2.DESCRIPTOR.services_by_name["IngestService"].full_name,
    graph_pb2.DESCRIPTOR.services_by_name["GraphService"].full_name,
)


class GrpcServer:
    """Owns a grpc.aio server; `start` binds and serves, `stop` flips health and drains."""

    def __init__(
        self,
        listen: str,
        query: QueryServicer | None,
        ingest: IngestServicer | None,
        max_message_mb: int = 16,
        graph: GraphServicer | None = None,
        interceptors: Sequence[grpc.aio.ServerInterceptor[Any, Any]] = (),
        credentials: grpc.ServerCredentials | None = None,
    ) -> None:
        limit = max_message_mb * 1024 * 1024
        self._server = grpc.aio.server(
            interceptors=[TracingInterceptor(), *interceptors],
            options=[
                *SERVER_OPTIONS,
                ("grpc.max_receive_message_length", limit),
                ("grpc.max_send_message_length", limit),
            ],
        )
        self._health = health_aio.HealthServicer()
        names: list[str] = [health.SERVICE_NAME]
        if query is not None:
            query_pb2_grpc.add_QueryServiceServicer_to_server(query, self._server)
            names.append(SERVICE_NAMES[0])
        if ingest is not None:
            ingest_pb2_grpc.add_IngestServiceServicer_to_server(ingest, self._server)
            names.append(SERVICE_NAMES[1])
        if graph is not None:
            graph_pb2_grpc.add_GraphServiceServicer_to_server(graph, self._server)
            names.append(SERVICE_NAMES[2])
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        reflection.enable(names, self._server)
        self._names = [n for n in names if n.startswith("ragstream.")]
        self.port = bind(self._server, listen, credentials)
        self._listen = listen

    @property
    def services(self) -> list[str]:
        """The ragstream services it serves, as grpc.health.v1 names them."""
        return list(self._names)

    async def start(self) -> None:
        await self._server.start()
        for name in ("", *self._names):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("gRPC server listening on %s (port %d)", self._listen, self.port)

    async def stop(self, grace_s: float = 10.0) -> None:
        """Reports NOT_SERVING first, so load balancers stop routing, then drains calls."""
        await self._health.enter_graceful_shutdown()
        await self._server.stop(grace_s)

    async def wait(self) -> None:
        await self._server.wait_for_termination()
