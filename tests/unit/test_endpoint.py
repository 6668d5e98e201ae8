"""JsonEndpoint against a small aiohttp server: what is retried, what is not, and the errors
a caller sees; the proxy an endpoint resolves from the environment."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable

import pytest
from aiohttp import web
from pydantic import SecretStr

from ragstream.common.providers import ProviderError
from ragstream.common.providers.endpoint import JsonEndpoint, RetryPolicy, proxy_for

Answer = Callable[[int], web.Response]
"""The answer to the n-th request (1-based)."""


class Scripted:
    """Answers POST /v1/x with `answer(n)`; counts the requests and keeps their headers."""

    def __init__(self) -> None:
        self.answer: Answer = lambda n: web.json_response({"ok": n})
        self.requests = 0
        self.authorization: list[str | None] = []

    async def handle(self, request: web.Request) -> web.Response:
        self.requests += 1
        self.authorization.append(request.headers.get("Authorization"))
        return self.answer(self.requests)


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[Scripted, str]]:
    server = Scripted()
    app = web.Application()
    app.router.add_post("/v1/x", server.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield server, f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()


@pytest.fixture
async def endpoints() -> AsyncIterator[Callable[..., JsonEndpoint]]:
    made: list[JsonEndpoint] = []

    def make(url: str, attempts: int = 3, key: str = "") -> JsonEndpoint:
        made.append(JsonEndpoint("test:m", url, SecretStr(key), 2.0, RetryPolicy(attempts, 0.001)))
        return made[-1]

    yield make
    for endpoint in made:
        await endpoint.close()


async def test_answers_are_decoded_and_the_key_is_a_bearer_token(
    scripted: tuple[Scripted, str], endpoints: Callable[..., JsonEndpoint]
) -> None:
    server, url = scripted
    assert await endpoints(url, key="k1").post("/x", {"a": 1}) == {"ok": 1}
    assert await endpoints(url).post("/x", {"a": 1}) == {"ok": 2}
    assert server.authorization == ["Bearer k1", None]


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503])
async def test_retried_statuses_are_retried_until_an_answer(
    scripted: tuple[Scripted, str], endpoints: Callable[..., JsonEndpoint], status: int
) -> None:
    server, url = scripted
    server.answer = lambda n: web.json_response({"n": n}, status=status if n < 3 else 200)
    assert await endpoints(url, attempts=3).post("/x", {}) == {"n": 3}
    assert server.requests == 3


async def test_a_client_error_is_not_retried_and_quotes_the_answer(
    scripted: tuple[Scripted, str], endpoints: Callable[..., JsonEndpoint]
) -> None:
    server, url = scripted
    server.answer = lambda n: web.json_response({"error": "model not found"}, status=404)
    with pytest.raises(ProviderError) as raised:
        await endpoints(url, attempts=5).post("/x", {})
    assert server.requests == 1
    assert str(raised.value) == f'test:m at {url}/x: HTTP 404: {{"error": "model not found"}}'


async def test_the_last_failure_names_the_attempts(
    scripted: tuple[Scripted, str], endpoints: Callable[..., JsonEndpoint]
) -> None:
    server, url = scripted
    server.answer = lambda n: web.Response(text="overloaded", status=503)
    with pytest.raises(ProviderError, match=r"HTTP 503: overloaded \(after 2 attempts\)"):
        await endpoints(url, attempts=2).post("/x", {})
    assert server.requests == 2


async def test_an_answer_that_is_not_json_is_an_error(
    scripted: tuple[Scripted, str], endpoints: Callable[..., JsonEndpoint]
) -> None:
    server, url = scripted
    server.answer = lambda n: web.Response(text="<html>gateway</html>")
    with pytest.raises(ProviderError, match=r"not JSON.*gateway"):
        await endpoints(url).post("/x", {})
    assert server.requests == 1


async def test_a_refused_connection_is_retried_then_reported(
    endpoints: Callable[..., JsonEndpoint],
) -> None:
    with socket.socket() as sock:  # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ProviderError, match=r"connection failed.*\(after 2 attempts\)"):
        await endpoints(f"http://127.0.0.1:{port}/v1", attempts=2).post("/x", {})


def test_the_proxy_comes_from_the_environment_unless_the_host_is_exempt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,models.internal")
    assert proxy_for("https://api.example.com/v1") == "http://proxy.internal:3128"
    assert proxy_for("https://models.internal/v1") is None
    assert proxy_for("http://localhost:8000/v1") is None
    assert proxy_for("http://api.example.com/v1") is None  # no HTTP_PROXY
