"""`ragstream serve`: the query service and, unless told otherwise, the indexer, in one
process on one set of backends (each service's main does its own wiring)."""

from __future__ import annotations

import asyncio

from ragstream.common.config import Settings
from ragstream.common.health import HealthServer
from ragstream.common.registry import open_backends
from ragstream.common.signals import stop_on_signals
from ragstream.common.telemetry import telemetry_session
from ragstream.indexer.main import run_stages
from ragstream.query.main import build_servers, serve_until


async def serve(
    settings: Settings,
    listen: str,
    with_indexer: bool = True,
    health_listen: str | None = None,
    http_listen: str | None = None,
) -> None:
    """Runs until SIGINT or SIGTERM, then drains the calls and commits the stages' work.

    The ports are bound (or, for HTTP, checked) before the indexer starts: an address that
    cannot be listened on (ListenError) stops the process before it does any work.
    `health_listen`: also a plaintext port serving only grpc.health.v1 (for probes that
    cannot speak TLS); `http_listen` (else server.http_listen): the HTTP/JSON port."""
    stop = stop_on_signals()
    telemetry = telemetry_session("ragstream", settings.bus.backend)
    async with telemetry, open_backends(settings) as backends:
        server, http = build_servers(settings, backends, listen, http_listen)
        health = HealthServer(health_listen, server.services) if health_listen else None
        async with asyncio.TaskGroup() as group:
            if with_indexer:
                group.create_task(run_stages(settings, backends, stop))
            await serve_until(server, listen, stop, health, http)
