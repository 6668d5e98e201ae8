"""A plaintext port that serves grpc.health.v1 only.

The indexer has no other port, and a query service under TLS keeps native gRPC probes on
it (probes speak no TLS and carry no token). The health state follows the process: SERVING
once started, NOT_SERVING from the moment it begins to stop.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ragstream.common.listen import SERVER_OPTIONS, bind

log = logging.getLogger(__name__)


class HealthServer:
    """grpc.health.v1 for the process (service "") and for the named services."""

    def __init__(self, listen: str, services: Sequence[str] = ()) -> None:
        self._server = grpc.aio.server(options=SERVER_OPTIONS)
        self._health = health_aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        self._services = ["", *services]
        self.port = bind(self._server, listen, None)
        self._listen = listen

    async def start(self) -> None:
        await self._server.start()
        for name in self._services:
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("health port on %s (port %d)", self._listen, self.port)

    async def stop(self, grace_s: float = 1.0) -> None:
        await self._health.enter_graceful_shutdown()
        await self._server.stop(grace_s)
