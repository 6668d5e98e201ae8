"""Benchmark of the embedding scheduler against the OpenAI-compatible test server.

Every embedding call takes a fixed 100 ms at the server, so the figures show what the
scheduler does, not what a model costs. Targets:

- one mix query (query, low-level and high-level keywords) makes exactly one request, and a
  naive query one request with only the query text;
- 64 concurrent queries make at most 8 requests;
- with an indexing backlog keeping every call slot busy, the query p50 rises by at most one
  embedding round trip (100 ms), because a query goes into the very next call.

Request counts come from the server's own log (server in this process). For latencies the
server runs in a process of its own, as a real provider would: in this process its work
(hashing thousands of chunk texts a second) would slow the event loop the scheduler runs on.

    .venv/bin/python tests/bench/bench_embedding_scheduler.py [--batch-size 64] [--concurrency 2]

Exits with status 1 when a figure misses its target.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import socket
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from ragstream.common.config import EmbeddingConfig
from ragstream.common.providers.embedding import Embedder, Matrix, OpenAIEmbedder
from ragstream.common.providers.scheduler import EmbeddingScheduler, Priority
from ragstream.common.text.tokens import count_tokens
from ragstream.testing.openai_server import OpenAITestServer

LATENCY_S = 0.1
MAX_CONCURRENT_QUERY_REQUESTS = 8
WORDS = (
    *("graph", "retrieval", "entity", "relation", "chunk", "keyword", "index", "stream"),
    *("document", "merge", "vector", "search", "answer", "query", "model", "token", "batch"),
    *("latency", "window", "priority", "backlog"),
)


@dataclass(frozen=True)
class Setup:
    batch_size: int
    concurrency: int
    window_ms: float

    def config(self, base_url: str) -> EmbeddingConfig:
        values = {
            "provider": "openai",
            "model": "test-embedding",
            "base_url": base_url,
            "api_key": "bench",
            "batch_size": self.batch_size,
            "concurrency": self.concurrency,
            "batch_window_ms": self.window_ms,
            "max_retries": 0,
        }
        return EmbeddingConfig.model_validate(values)

    def scheduler(self, base_url: str, calls: list[Timing] | None = None) -> EmbeddingScheduler:
        cfg = self.config(base_url)
        embedder = OpenAIEmbedder(cfg)
        return EmbeddingScheduler(embedder if calls is None else Timed(embedder, calls), cfg)


@dataclass
class Timing:
    """One provider call, or one query as its caller saw it (perf_counter seconds)."""

    began: float
    ended: float
    texts: Sequence[str]

    @property
    def seconds(self) -> float:
        return self.ended - self.began


class Timed:
    """An Embedder that records every call to the one it wraps."""

    def __init__(self, inner: Embedder, calls: list[Timing]) -> None:
        self.inner = inner
        self.name = inner.name
        self.languages = inner.languages
        self.calls = calls

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    async def embed(self, texts: Sequence[str]) -> Matrix:
        began = time.perf_counter()
        matrix = await self.inner.embed(texts)
        self.calls.append(Timing(began, time.perf_counter(), texts))
        return matrix

    async def close(self) -> None:
        await self.inner.close()


def query_texts(mode: str, index: int) -> list[str]:
    """What one query embeds: mix needs the query and both keyword sets, naive the query."""
    query = f"how does {WORDS[index % len(WORDS)]} relate to streaming index {index}?"
    if mode == "naive":
        return [query]
    return [query, f"{WORDS[index % 7]}, {WORDS[index % 11]}", f"topic {index}, overview"]


def chunk_texts(worker: int, round_: int, count: int = 32) -> list[str]:
    """A document's chunks: about 100 words each, different every time."""
    rng = random.Random(worker * 100_003 + round_)
    return [" ".join(rng.choices(WORDS, k=100)) for _ in range(count)]


@contextlib.asynccontextmanager
async def local_server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer() as server:
        server.set_latency("embeddings", LATENCY_S)
        yield server


@contextlib.asynccontextmanager
async def server_process() -> AsyncIterator[str]:
    """The same test server in a child process; yields its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "ragstream.testing.openai_server", "--port", str(port)],
        *["--embed-latency-ms", str(LATENCY_S * 1000)],
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        async with asyncio.timeout(30):
            line = await child.stdout.readline()
        if not line.startswith(b"serving"):
            raise RuntimeError(f"the test server did not start: {line!r}")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        child.terminate()
        await child.wait()


async def query_batches(setup: Setup, mode: str, count: int) -> tuple[list[int], float]:
    """Batch sizes the server saw, and the slowest query in seconds, for `count` queries
    of `mode` sent at once."""
    async with local_server() as server, setup.scheduler(server.base_url) as scheduler:
        view = scheduler.view(Priority.QUERY)
        asked: list[Timing] = []
        await asyncio.gather(*(timed_query(view, mode, i, asked) for i in range(count)))
        return list(server.log.embedding_batch_sizes), max(query.seconds for query in asked)


async def timed_query(view: Embedder, mode: str, index: int, asked: list[Timing]) -> None:
    texts = query_texts(mode, index)
    began = time.perf_counter()
    await view.embed(texts)
    asked.append(Timing(began, time.perf_counter(), texts))


async def index_forever(scheduler: EmbeddingScheduler, worker: int, done: list[int]) -> None:
    for round_ in range(1_000_000):
        texts = chunk_texts(worker, round_)
        await scheduler.embed(texts, priority=Priority.INDEXING)
        done[0] += len(texts)


@dataclass
class LatencyRun:
    queries: list[Timing]
    calls: list[Timing]
    indexed_per_s: float

    @property
    def p50(self) -> float:
        return statistics.median(query.seconds for query in self.queries)

    @property
    def round_trip(self) -> float:
        """p50 duration of a provider call in this run."""
        return statistics.median(call.seconds for call in self.calls)

    def describe(self) -> str:
        latencies = [query.seconds for query in self.queries]
        p95 = statistics.quantiles(latencies, n=20)[-1]
        return (
            f"p50 {self.p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, "
            f"max {max(latencies) * 1000:.0f} ms; round trip p50 {self.round_trip * 1000:.0f} ms; "
            f"indexing {self.indexed_per_s:.0f} texts/s"
        )


async def query_latency(
    setup: Setup, base_url: str, indexers: int, queries: int, priority: Priority = Priority.QUERY
) -> LatencyRun:
    """Mix queries arriving at random (Poisson, one per round trip on average, independent of
    the calls), while `indexers` workers each keep one 32-chunk indexing request queued."""
    done, rng = [0], random.Random(7)
    asked: list[Timing] = []
    calls: list[Timing] = []
    async with setup.scheduler(base_url, calls) as scheduler, asyncio.TaskGroup() as group:
        view = scheduler.view(priority)
        workers = [group.create_task(index_forever(scheduler, w, done)) for w in range(indexers)]
        await asyncio.sleep(5 * LATENCY_S)  # the backlog builds up; the encoding loads
        began, indexed, tasks = time.perf_counter(), done[0], []
        calls.clear()
        for index in range(queries):
            await asyncio.sleep(rng.expovariate(1 / LATENCY_S))
            tasks.append(group.create_task(timed_query(view, "mix", index, asked)))
        await asyncio.gather(*tasks)
        rate = (done[0] - indexed) / (time.perf_counter() - began)
        for worker in workers:
            worker.cancel()
    return LatencyRun(asked, calls, rate)


async def request_counts(setup: Setup) -> list[str]:
    missed = []
    await query_batches(setup, "naive", 1)  # the openai client's first call loads its modules
    for mode, count in (("mix", 1), ("naive", 1), ("mix", 64), ("naive", 64)):
        sizes, slowest = await query_batches(setup, mode, count)
        print(
            f"{count:2} {mode:5} quer{'y' if count == 1 else 'ies'} at once: "
            f"{len(sizes)} request(s), batch sizes {sizes}, slowest query {slowest * 1000:.0f} ms"
        )
        expected = len(query_texts(mode, 0))
        if count == 1 and sizes != [expected]:
            missed.append(f"one {mode} query made requests of sizes {sizes}, not [{expected}]")
        if len(sizes) > MAX_CONCURRENT_QUERY_REQUESTS:
            missed.append(f"{count} concurrent {mode} queries made {len(sizes)} requests")
    return missed


async def latencies(setup: Setup, indexers: int, queries: int) -> list[str]:
    async with server_process() as base_url:
        idle = await query_latency(setup, base_url, 0, queries)
        busy = await query_latency(setup, base_url, indexers, queries)
        fifo = await query_latency(setup, base_url, indexers, queries, Priority.INDEXING)
    print(f"queries, idle provider:     {idle.describe()}")
    print(f"queries, {indexers:2} indexing workers: {busy.describe()}")
    print(f"the same, queries not jumping the queue (at indexing priority): {fifo.describe()}")
    rise = busy.p50 - idle.p50
    print(
        f"p50 rise under the indexing backlog: {rise * 1000:.0f} ms; one round trip is "
        f"{LATENCY_S * 1000:.0f} ms at the server, {busy.round_trip * 1000:.0f} ms measured "
        "under the backlog (client and server share this machine's cores)"
    )
    missed = []
    if rise > max(LATENCY_S, busy.round_trip):
        missed.append(f"query p50 rose by {rise * 1000:.0f} ms, more than one round trip")
    return missed


async def run(setup: Setup, indexers: int, queries: int) -> list[str]:
    """Prints the figures; returns the targets that were missed."""
    print(f"{setup}; the server answers each embedding call after {LATENCY_S * 1000:.0f} ms")
    count_tokens("")  # loads the encoding, which would otherwise delay the first query
    missed = await request_counts(setup)
    return missed + await latencies(setup, indexers, queries)


def main(argv: Sequence[str] | None = None) -> int:
    defaults = EmbeddingConfig()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--concurrency", type=int, default=defaults.concurrency)
    parser.add_argument("--window-ms", type=float, default=defaults.batch_window_ms)
    parser.add_argument("--indexers", type=int, default=20)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args(argv)
    setup = Setup(args.batch_size, args.concurrency, args.window_ms)
    missed = asyncio.run(run(setup, args.indexers, args.queries))
    for target in missed:
        print(f"MISSED: {target}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
