"""The optional HTTP/JSON port: the API routes (`routes`) and the web console (`console/`).

aiohttp serves it: the project already depends on it (the OpenAI-compatible test servers),
it is asyncio-native so the routes await the same servicers in the same event loop as the
gRPC server, it streams responses (server-sent events) and cancels a handler whose client
disconnects (`handler_cancellation`), and it is maintained by the aio-libs organisation with
regular releases. The console is static files shipped in the package: no build step, nothing
fetched at run time. With a TLS certificate configured (auth.tls_cert), the port speaks
HTTPS, and with auth.client_ca it requires client certificates, as the gRPC port does.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Sequence
from pathlib import Path

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.web_protocol import RequestPayloadError

from ragstream.common.listen import parse_listen
from ragstream.query.transport.gate import Gate
from ragstream.query.transport.http.browser import Hosts, add_security_headers, guard
from ragstream.query.transport.http.middleware import install_cors, json_errors, traced
from ragstream.query.transport.http.routes import Route, add_routes

log = logging.getLogger(__name__)
CONSOLE = Path(__file__).parent / "console"


def build_app(
    routes: list[Route],
    gate: Gate,
    cors_origins: Sequence[str] = (),
    max_body_mb: int = 16,
    hosts: Hosts | None = None,
) -> web.Application:
    """The API routes behind the gate, the console at / and /console/, CORS if asked;
    requests a browser could be made to send from another site are refused (`browser`),
    `hosts` being the names the Host header may give (default: addresses and localhost)."""
    limit = max_body_mb * 1024 * 1024
    guarded = guard(hosts or Hosts.of("localhost"), cors_origins)
    app = web.Application(middlewares=[traced, json_errors, guarded], client_max_size=limit)
    app.on_response_prepare.append(add_security_headers)
    add_routes(app, routes, gate)

    async def index(request: web.Request) -> web.FileResponse:
        return web.FileResponse(CONSOLE / "index.html")

    app.router.add_get("/", index)
    app.router.add_static("/console/", CONSOLE, show_index=False, follow_symlinks=False)
    if cors_origins:
        install_cors(app, cors_origins)
    return app


def _client_fault(record: logging.LogRecord) -> bool:
    """aiohttp logs a traceback at ERROR for requests it cannot parse (a malformed request
    line or header, a Content-Encoding it does not know) and for a body that does not
    decode, which it finds reading what a handler left after the answer. Both are a
    client's fault, already answered 400: such a record becomes one line at INFO."""
    error = record.exc_info[1] if record.exc_info else None
    refused = isinstance(error, HttpProcessingError) and (error.code or 400) < 500
    if isinstance(error, RequestPayloadError) or refused:
        log.info("refused a malformed request: %s", str(error).replace("\n", " "))
        return False
    return True


class HttpServer:
    """Owns an aiohttp runner; `start` binds and serves, `stop` finishes the requests."""

    def __init__(
        self,
        listen: str,
        app: web.Application,
        ssl_context: ssl.SSLContext | None = None,
        grace_s: float = 10.0,
    ) -> None:
        self._host, self._port = parse_listen(listen)
        self._ssl = ssl_context
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=grace_s
        )
        self.port = 0
        logging.getLogger("aiohttp.server").addFilter(_client_fault)

    async def start(self) -> None:
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port, ssl_context=self._ssl)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        scheme = "https" if self._ssl else "http"
        log.info("HTTP/JSON and console on %s://%s:%d/", scheme, self._host, self.port)

    async def stop(self) -> None:
        """Stops accepting, lets requests in flight finish (up to grace_s), then closes."""
        await self._runner.cleanup()
