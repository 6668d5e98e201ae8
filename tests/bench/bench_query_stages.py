"""A mix query's retrieval in one process: its stages, its store calls and its CPU.

The demo corpus is indexed first, as `bench_burst.py` indexes it (a `ragstream serve` with
the OpenAI-compatible test server's instant embeddings), unless `--index-dir` names one
indexed before (the directory is kept). Then the real QueryEngine runs mix retrievals on
the embedded stores of that directory in this process, with the bench's keywords given (no
LLM call) and an embedder that waits `--embed-ms` (100) before answering with the test
server's vectors, so the searches started during the embedding overlap it as they do when
served. Printed: p50 of the whole retrieval and of each stage, the CPU time a retrieval
took (every thread of the process), and p50 of each call into the search and graph stores.
A benchmark, run on demand:

    .venv/bin/python -m tests.bench.bench_query_stages [--queries 300] [--index-dir DIR]

The graph and record caches (9a760c1 against b66b05c, in turn twice): CPU p50 15.35, 16.34
-> 12.76, 9.93 ms; retrieval p50 112.5, 113.2 -> 109.8, 107.7 ms; search_entities 7.6, 7.9
-> 5.0, 3.9 ms; budget 1.09, 1.12 -> 0.68, 0.50 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from ragstream.common.config import Settings
from ragstream.common.providers.embedding import Matrix, hash_embed
from ragstream.common.registry import open_backends
from ragstream.common.timing import StageTimer
from ragstream.query.engine import QueryEngine
from ragstream.query.transport.convert import query_options
from ragstream.query.types import QueryInput
from ragstream.v1 import query_pb2
from tests.bench.bench_burst import responder, start_llm
from tests.bench.bench_load import QUESTIONS, WORKSPACE, index_corpus, provider_env, run_serve
from tests.support.server import free_port

WARMUP = 10


class DelayedEmbedder:
    """The test server's vectors (64-d hashed) after a fixed wait, like a remote model."""

    def __init__(self, delay_s: float) -> None:
        self.name = "hash:64"
        self.dimensions = 64
        self.languages = frozenset({"*"})
        self._delay_s = delay_s

    async def embed(self, texts: Sequence[str]) -> Matrix:
        await asyncio.sleep(self._delay_s)
        return hash_embed(texts, self.dimensions)

    async def close(self) -> None:
        return None


def timed(target: object, names: Sequence[str], prefix: str, into: dict[str, list[float]]) -> None:
    """Wraps each named coroutine method of `target` to record its wall time in ms."""
    for name in names:
        call: Callable[..., Awaitable[Any]] = getattr(target, name)

        async def wrapper(
            *args: Any, _call: Any = call, _label: str = prefix + name, **kwargs: Any
        ) -> Any:
            started = time.perf_counter()
            try:
                return await _call(*args, **kwargs)
            finally:
                into[_label].append((time.perf_counter() - started) * 1000)

        setattr(target, name, wrapper)


async def index_demo(data_dir: Path) -> None:
    port = free_port()
    llm = start_llm(port, 0.0)
    try:
        server = await asyncio.to_thread(
            run_serve, data_dir, provider_env(f"http://127.0.0.1:{port}/v1")
        )
        try:
            await index_corpus(server.address)
        finally:
            await asyncio.to_thread(server.stop)
    finally:
        llm.terminate()
        llm.wait(timeout=10)


async def measure(data_dir: Path, queries: int, embed_ms: float) -> dict[str, Any]:
    os.environ["RAGSTREAM_DATA_DIR"] = str(data_dir)
    settings = Settings()
    stages: dict[str, list[float]] = defaultdict(list)
    calls: dict[str, list[float]] = defaultdict(list)
    cpu: list[float] = []
    async with open_backends(settings) as backends:
        stores = backends.stores
        engine = QueryEngine(
            stores,
            DelayedEmbedder(embed_ms / 1000),
            None,
            candidates=settings.query.candidates,
            rrf_k=settings.query.rrf_k,
        )
        timed(stores.search, ("search_terms", "search_vector", "get"), "search.", calls)
        timed(stores.graph, ("edges_of", "degrees", "get_nodes", "get_edges"), "graph.", calls)
        for n in range(queries + WARMUP):
            question = f"{QUESTIONS[n % len(QUESTIONS)]['question']} (variant {n})"
            prompt = [{"content": "high_level_keywords Question: " + question}]
            keywords = json.loads(responder(prompt, {}))
            params = query_pb2.QueryParams(
                mode=query_pb2.QUERY_MODE_MIX,
                hl_keywords=keywords["high_level_keywords"],
                ll_keywords=keywords["low_level_keywords"],
            )
            q = QueryInput(WORKSPACE, question, query_options(params, settings.query))
            timer = StageTimer()
            started, used = time.perf_counter(), time.process_time()
            engine.messages(q, await engine.retrieve(q, timer))
            if n < WARMUP:
                calls.clear()
                continue
            stages["retrieval"].append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
            for stage, ms in timer.items():
                stages[stage].append(ms)
    return {
        "queries": queries,
        "cpu_ms_p50": round(statistics.median(cpu), 2),
        "stage_ms_p50": {k: round(statistics.median(v), 2) for k, v in stages.items()},
        "store_calls": {
            k: {"per_query": round(len(v) / queries, 1), "ms_p50": round(statistics.median(v), 2)}
            for k, v in sorted(calls.items())
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--embed-ms", type=float, default=100.0)
    parser.add_argument("--index-dir", type=Path, help="a data directory indexed before, kept")
    args = parser.parse_args()
    if args.index_dir is not None and (args.index_dir / "ragstream.db").exists():
        report = asyncio.run(measure(args.index_dir, args.queries, args.embed_ms))
    else:
        with tempfile.TemporaryDirectory(prefix="ragstream-stages-") as tmp:
            data_dir = args.index_dir or Path(tmp) / "data"
            data_dir.parent.mkdir(parents=True, exist_ok=True)
            asyncio.run(index_demo(data_dir))
            report = asyncio.run(measure(data_dir, args.queries, args.embed_ms))
    json.dump(report, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
