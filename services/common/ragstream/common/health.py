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

log = logging.getLogger(__name__)


def bind(server: grpc.aio.Server, listen: str, credentials: grpc.ServerCredentials | None) -> int:
    """Binds `listen` and returns the port; an address that cannot be bound is an OSError."""
    try:
        port = (
            server.add_secure_port(listen, credentials)
            if credentials is not None
            else server.add_insecure_port(listen)
        )
    except RuntimeError as exc:  # grpc reports a failed bind as RuntimeError
        raise OSError(f"cannot listen on {listen}: {exc}") from None
    if port == 0:
        raise OSError(f"cannot listen on {listen}")
    return port


class HealthServer:
    """grpc.health.v1 for the process (service "") and for the named services."""

    def __init__(self, listen: str, services: Sequence[str] = ()) -> None:
        self._server = grpc.aio.server()
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
