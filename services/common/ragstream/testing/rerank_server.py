"""A reranker HTTP server for tests and benchmarks, speaking both API formats in use.

- POST /v1/rerank: the flat format of Jina and Cohere, `{"model", "query", "documents",
  "top_n"}` answered with `{"model", "results": [{"index", "relevance_score", "document"}],
  "usage"}` (Jina's shape, extra fields included, so clients must tolerate them);
- POST /api/v1/services/rerank/text-rerank/text-rerank: Aliyun DashScope's nested format,
  `{"model", "input": {"query", "documents"}, "parameters": {"top_n", "return_documents"}}`
  answered with `{"output": {"results": [{"index", "relevance_score"}]}, "usage",
  "request_id"}`.

Scoring is pluggable; the default is a genuine relevance signal, BM25 over the terms of
`ragstream.common.text.analyzer.analyze`, so rankings from this server can be evaluated like a
real model's. Failures (the next N requests answered with a status, or their connection
dropped) and latency can be injected, and every request is logged.

    async with RerankTestServer() as server:
        cfg = RerankConfig(provider="jina", model="m", base_url=server.url("jina"))

Run standalone for manual checks:

    python -m ragstream.testing.rerank_server --port 8090
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from aiohttp import web

from ragstream.common.text.analyzer import analyze
from ragstream.testing.local_server import LocalServer

Format = Literal["flat", "aliyun"]
Body = dict[str, Any]
Scorer = Callable[[str, Sequence[str]], Sequence[float]]
"""(query, documents) -> one relevance score per document."""

FLAT_PATH = "/v1/rerank"
ALIYUN_PATH = "/api/v1/services/rerank/text-rerank/text-rerank"
PATHS: dict[str, str] = {"jina": FLAT_PATH, "cohere": FLAT_PATH, "aliyun": ALIYUN_PATH}


@dataclass(frozen=True, slots=True)
class TermStats:
    """Document frequencies for BM25's IDF and the mean document length."""

    doc_freq: dict[str, int]
    docs: int
    mean_length: float

    @classmethod
    def of(cls, texts: Iterable[str]) -> TermStats:
        doc_freq: Counter[str] = Counter()
        docs = total = 0
        for text in texts:
            terms = analyze(text)
            doc_freq.update(set(terms))
            docs += 1
            total += len(terms)
        return cls(dict(doc_freq), docs, total / docs if docs else 0.0)


class Bm25Scorer:
    """BM25 of the query's analyzed terms in each document (k1 = 1.2, b = 0.75: the defaults of
    Lucene, Elasticsearch and SQLite FTS5), squashed by s / (1 + s) into [0, 1) like the
    relevance_score of the real APIs.

    Statistics come from `stats` (e.g. a whole corpus) or, without it, from the documents of
    each request alone, the only text a real reranker sees. The latter is a weaker signal: among
    candidates that all share the query's main terms, those terms get little weight.
    """

    def __init__(self, stats: TermStats | None = None, k1: float = 1.2, b: float = 0.75) -> None:
        self._stats = stats
        self._k1 = k1
        self._b = b

    def __call__(self, query: str, documents: Sequence[str]) -> list[float]:
        stats = self._stats or TermStats.of(documents)
        query_terms = set(analyze(query))
        scores = []
        for document in documents:
            terms = analyze(document)
            counts = Counter(term for term in terms if term in query_terms)
            norm = self._k1 * (1 - self._b + self._b * len(terms) / max(stats.mean_length, 1.0))
            score = sum(
                _idf(stats, term) * tf * (self._k1 + 1) / (tf + norm) for term, tf in counts.items()
            )
            scores.append(score / (1 + score))
        return scores


def _idf(stats: TermStats, term: str) -> float:
    df = stats.doc_freq.get(term, 0)
    return math.log(1 + (stats.docs - df + 0.5) / (df + 0.5))


@dataclass
class RerankLog:
    """What the server saw, per format."""

    received: Counter[str] = field(default_factory=Counter)
    """Requests that arrived, injected failures included."""
    failed: Counter[str] = field(default_factory=Counter)
    """Requests answered with an injected status or dropped."""
    completed: Counter[str] = field(default_factory=Counter)
    bodies: list[Body] = field(default_factory=list)
    """Every request body, in arrival order."""
    authorization: list[str | None] = field(default_factory=list)
    """Every request's Authorization header, in arrival order."""

    @property
    def total(self) -> int:
        return sum(self.received.values())


@dataclass
class _Failure:
    remaining: int
    status: int | None
    """None drops the connection without an answer."""
    retry_after_s: float | None


_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class RerankTestServer(LocalServer):
    """Binds 127.0.0.1 on a free port (or the given one); `url(provider)` is the endpoint."""

    def __init__(
        self, *, host: str = "127.0.0.1", port: int = 0, scorer: Scorer | None = None
    ) -> None:
        super().__init__(host=host, port=port)
        self.log = RerankLog()
        self._scorer: Scorer = scorer or Bm25Scorer()
        self._latency_s = 0.0
        self._failure: _Failure | None = None
        self._ids = itertools.count(1)

    def url(self, provider: str) -> str:
        """The endpoint for a `rerank.provider` (jina, cohere, aliyun)."""
        return f"http://{self.host}:{self.port}{PATHS[provider]}"

    def set_scorer(self, scorer: Scorer) -> None:
        self._scorer = scorer

    def set_latency(self, seconds: float) -> None:
        """Delay before every answer (injected failures are answered at once)."""
        self._latency_s = seconds

    def fail_next(
        self, count: int = 1, *, status: int | None = 503, retry_after_s: float | None = None
    ) -> None:
        """The next `count` requests get `status` with an error body in their format; with
        status None their connection is closed without an answer."""
        self._failure = _Failure(count, status, retry_after_s)

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post(FLAT_PATH, self._handler("flat"))
        app.router.add_post(ALIYUN_PATH, self._handler("aliyun"))

    def _handler(self, fmt: Format) -> _Handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            self.log.received[fmt] += 1
            self.log.authorization.append(request.headers.get("Authorization"))
            try:
                body = await request.json()
            except json.JSONDecodeError:
                body = None
            self.log.bodies.append(body if isinstance(body, dict) else {})
            failure = self._take_failure(fmt, request)
            if failure is not None:
                return failure
            parsed = _parse(fmt, body)
            if isinstance(parsed, str):
                return _error(fmt, 400, parsed)
            await asyncio.sleep(self._latency_s)
            answer = self._answer(fmt, *parsed)
            self.log.completed[fmt] += 1
            return web.json_response(answer)

        return handle

    def _take_failure(self, fmt: Format, request: web.Request) -> web.Response | None:
        failure = self._failure
        if failure is None or failure.remaining <= 0:
            return None
        failure.remaining -= 1
        self.log.failed[fmt] += 1
        if failure.status is None:
            if request.transport is not None:
                request.transport.close()
            return web.Response(status=500)  # never reaches the client
        headers = {}
        if failure.retry_after_s is not None:
            headers["Retry-After"] = str(failure.retry_after_s)
        return _error(fmt, failure.status, "injected failure", headers)

    def _answer(
        self, fmt: Format, model: str, query: str, documents: list[str], top_n: int
    ) -> Body:
        scores = list(self._scorer(query, documents))
        order = sorted(range(len(documents)), key=lambda i: -scores[i])[:top_n]
        tokens = len(analyze(query)) * len(documents) + sum(len(analyze(d)) for d in documents)
        if fmt == "aliyun":
            results: list[Body] = [{"index": i, "relevance_score": scores[i]} for i in order]
            return {
                "output": {"results": results},
                "usage": {"total_tokens": tokens},
                "request_id": f"req-{next(self._ids)}",
            }
        results = [
            {"index": i, "document": {"text": documents[i]}, "relevance_score": scores[i]}
            for i in order
        ]
        return {"model": model, "results": results, "usage": {"total_tokens": tokens}}


def _parse(fmt: Format, body: object) -> tuple[str, str, list[str], int] | str:
    """(model, query, documents, top_n) from a request, or what is wrong with it."""
    if not isinstance(body, dict):
        return "the body must be a JSON object"
    if fmt == "aliyun":
        source = body.get("input")
        params = body.get("parameters") or {}
        if not isinstance(source, dict) or not isinstance(params, dict):
            return "input must be an object with query and documents"
    else:
        source, params = body, body
    query, documents = source.get("query"), source.get("documents")
    if not isinstance(query, str):
        return "query must be a string"
    if not isinstance(documents, list) or not all(isinstance(d, str) for d in documents):
        return "documents must be a list of strings"
    top_n = params.get("top_n", len(documents))
    if not isinstance(top_n, int) or top_n < 1:
        return "top_n must be a positive integer"
    return str(body.get("model", "")), query, documents, top_n


def _error(
    fmt: Format, status: int, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    if fmt == "aliyun":
        body: Body = {"code": "InvalidParameter" if status < 500 else "InternalError"}
        body |= {"message": message, "request_id": "req-error"}
    else:
        body = {"detail": message}
    return web.json_response(body, status=status, headers=headers)


async def _serve(args: argparse.Namespace) -> None:
    server = RerankTestServer(host=args.host, port=args.port)
    server.set_latency(args.latency_ms / 1000)
    async with server:
        print(f"reranking at {server.url('jina')} and {server.url('aliyun')}", flush=True)
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="reranker test server (Jina/Cohere, Aliyun)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args(argv)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args))


if __name__ == "__main__":
    main()
