"""JSON over HTTP to a model endpoint: one POST, retried, answered as plain JSON values.

The chat, embedding and rerank providers send their requests through `JsonEndpoint`: aiohttp,
JSON in and out, no typed models on the way. With a fast model server the client's own work
is a large part of indexing, and this path costs the event loop a fraction of the openai
client's (tests/bench/bench_http_client.py). Streamed chat answers still go through the
openai client (llm.OpenAIChat.stream), which parses their server-sent events.

Retried, up to `RetryPolicy.attempts` attempts in all: connection errors, timeouts, and the
answers 408, 409, 429 and 5xx. The delay doubles from `backoff_s` up to `max_backoff_s`, half
of it random so that clients that failed together do not retry together; a Retry-After (in
seconds) or retry-after-ms header is honoured up to the request timeout.
"""

from __future__ import annotations

import asyncio
import logging
import random
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
from pydantic import SecretStr

from ragstream.common import json_text
from ragstream.common.providers import ProviderError

log = logging.getLogger(__name__)

RETRIED_STATUSES = frozenset({408, 409, 429})
"""Besides 5xx: a request timeout, a conflict (a lock held elsewhere) and a rate limit."""
BODY_EXCERPT = 300
"""Characters of an error answer quoted in the error."""
_JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int
    """Attempts in all (1: no retry)."""
    backoff_s: float = 0.5
    """The delay before the second attempt; it doubles for each further one."""
    max_backoff_s: float = 8.0


class _Retryable(Exception):
    """An attempt failed in a way worth retrying."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after_s = retry_after_s


class JsonEndpoint:
    """POSTs JSON to `url` + path and returns the decoded answer; a failure after the retries
    is a ProviderError that names `name` and the URL.

    The session is created on first use, because an aiohttp session belongs to the event loop
    it was created in. The API key, when set, goes in an `Authorization: Bearer` header.
    """

    def __init__(
        self, name: str, url: str, api_key: SecretStr, timeout_s: float, retry: RetryPolicy
    ) -> None:
        self.name = name
        self.url = url.rstrip("/")
        self._key = api_key
        self._timeout_s = timeout_s
        self._retry = retry
        self._session: aiohttp.ClientSession | None = None
        self._proxy = proxy_for(self.url)

    async def post(self, path: str, body: Mapping[str, object]) -> object:
        attempts = self._retry.attempts
        for attempt in range(1, attempts + 1):
            try:
                return await self._post_once(path, body)
            except _Retryable as exc:
                if attempt == attempts:
                    raise self.error(f"{exc} (after {attempts} attempts)", path) from exc
                delay = self._delay(attempt, exc.retry_after_s)
                log.warning("%s: %s; retrying in %.2f s", self.name, exc, delay)
                await asyncio.sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def error(self, reason: str, path: str = "") -> ProviderError:
        return ProviderError(f"{self.name} at {self.url}{path}: {reason}")

    async def _post_once(self, path: str, body: Mapping[str, object]) -> object:
        url = self.url + path
        try:
            async with self._client().post(
                url, data=json_text.dumps_bytes(body), headers=_JSON, proxy=self._proxy
            ) as response:
                data = await response.read()
                status = response.status
                retry_after = _retry_after_s(response.headers)
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise _Retryable(f"connection failed: {exc!r}") from exc
        except TimeoutError as exc:
            raise _Retryable(f"no answer within {self._timeout_s} s") from exc
        if status in RETRIED_STATUSES or status >= 500:
            raise _Retryable(f"HTTP {status}: {_excerpt(data)}", retry_after)
        if status >= 400:
            raise self.error(f"HTTP {status}: {_excerpt(data)}", path)
        try:
            return json_text.loads(data)
        except ValueError as exc:
            raise self.error(f"the answer is not JSON ({exc}): {_excerpt(data)!r}", path) from exc

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            key = self._key.get_secret_value()
            self._session = aiohttp.ClientSession(
                headers={"Authorization": f"Bearer {key}"} if key else None,
                timeout=aiohttp.ClientTimeout(total=self._timeout_s),
            )
        return self._session

    def _delay(self, attempt: int, retry_after_s: float | None) -> float:
        retry = self._retry
        base = min(retry.backoff_s * 2.0 ** (attempt - 1), retry.max_backoff_s)
        delay = base / 2 + random.uniform(0, base / 2)
        if retry_after_s is not None:
            delay = max(delay, min(retry_after_s, self._timeout_s))
        return delay


def proxy_for(url: str) -> str | None:
    """The proxy HTTP(S)_PROXY names for `url`, unless NO_PROXY exempts its host; read once
    per endpoint (aiohttp's trust_env reads the environment and ~/.netrc on every request,
    which tripled the client's CPU per request)."""
    parts = urlsplit(url)
    if not parts.hostname or urllib.request.proxy_bypass(parts.hostname):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def _retry_after_s(headers: Mapping[str, str]) -> float | None:
    """retry-after-ms, else Retry-After in its seconds form (the HTTP-date form is ignored:
    backoff applies)."""
    for name, scale in (("retry-after-ms", 0.001), ("Retry-After", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None


def _excerpt(data: bytes) -> str:
    return data[: BODY_EXCERPT * 4].decode(errors="replace")[:BODY_EXCERPT]
