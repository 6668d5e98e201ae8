"""The lifecycle the HTTP test servers share: an aiohttp application on a loopback port."""

from __future__ import annotations

import socket
from typing import Self

from aiohttp import web


class LocalServer:
    """Serves the routes a subclass adds, from `start` (or `async with`) until `close`.

    Port 0 binds a free port; `port` holds the bound one once started.
    """

    handler_cancellation = False
    """Whether a client that disconnects cancels its handler (aiohttp's option)."""

    def __init__(self, *, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    def add_routes(self, app: web.Application) -> None:
        """The subclass's handlers."""
        raise NotImplementedError

    async def start(self) -> None:
        app = web.Application()
        self.add_routes(app)
        # A short shutdown_timeout: a test that leaves a stream open must not stall for a minute.
        self._runner = web.AppRunner(
            app,
            handler_cancellation=self.handler_cancellation,
            access_log=None,
            shutdown_timeout=1.0,
        )
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
