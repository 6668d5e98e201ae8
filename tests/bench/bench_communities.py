"""Communities on the 100-document corpus graph: the frontier update against a rebuild.

The entity graph is the one the real pipeline builds from tests/bench/bench_scale.py's
100-document corpus (embedded backends, the scripted `names` extraction model). Then a
stream of random upserts (new entities related to old ones), edits (relations reweighted,
dropped or added) and deletes (entities gone with their relations) is applied one step at a
time; after each, the frontier update from the previous partition and a full rebuild of the
same graph are both made and their modularity compared. A benchmark, run on demand:

    .venv/bin/python -m tests.bench.bench_communities [--steps 200] [--seeds 1 2 3]

Printed per seed: the worst relative modularity gap of the update below the rebuild, the
final modularities, p50 seconds of an update and of a rebuild, and whether any community
ever held a deleted entity. Before that, on the indexed corpus: the p50 and p90 of a
`community` query ("What are the main themes across these documents?") through the query
engine, offline (findings) and with an instant OpenAI-compatible test server (map and
reduce), 20 runs each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ragstream.cli.local_index import publish, running_indexer, wait_current
from ragstream.common.config import LLMConfig, QueryDefaults, Settings
from ragstream.common.providers.llm import OpenAIChat
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import Backends
from ragstream.common.timing import StageTimer
from ragstream.indexer.communities.graph import WeightedGraph
from ragstream.indexer.communities.leiden import LeidenParams
from ragstream.indexer.communities.maintain import rebuild, update
from ragstream.indexer.communities.modularity import modularity
from ragstream.query.engine import QueryEngine
from ragstream.query.transport.convert import query_options
from ragstream.query.types import QueryInput
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import query_pb2
from tests.bench import bench_scale
from tests.pipeline.test_community_query import QUESTION, analyst
from tests.unit.test_communities import edit, members


async def corpus_graph(settings: Settings, corpus: Path) -> WeightedGraph:
    async with running_indexer(settings) as backends:
        await publish(backends, bench_scale.documents(corpus))
        await wait_current(settings, backends)
        for name, chat in (("offline", None), ("llm", "analyst")):
            print(json.dumps({"community_query": name, **await query_times(backends, chat)}))
        graph = backends.stores.graph
        stats = await graph.stats(bench_scale.WS, 1_000_000)
        edges = await graph.edges_among(bench_scale.WS, [key for key, _ in stats.top])
    return WeightedGraph.of((e.source, e.target, e.weight) for e in edges)


async def query_times(backends: Backends, chat: str | None, runs: int = 20) -> dict[str, Any]:
    """Seconds of a community query (retrieval and answer), p50 and p90 of `runs`."""
    async with OpenAITestServer(responder=analyst) as server:
        model = OpenAIChat(LLMConfig(provider="openai", model="m", base_url=server.base_url))
        engine = QueryEngine(
            backends.stores, backends.providers.embeddings.view(Priority.QUERY),
            model if chat else None,
        )  # fmt: skip
        params = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_COMMUNITY)
        q = QueryInput(bench_scale.WS, QUESTION, query_options(params, QueryDefaults()))
        seconds, cited = [], 0
        for _ in range(runs):
            began, timer = time.perf_counter(), StageTimer()
            retrieval = await engine.retrieve(q, timer)
            answer = await engine.answer(q, retrieval, timer)
            seconds.append(time.perf_counter() - began)
            cited = len(set(re.findall(r"\[Data: Reports \((\S+)\)\]", answer)))
        await model.close()
    seconds.sort()
    return {
        "p50_s": round(statistics.median(seconds), 4),
        "p90_s": round(seconds[int(0.9 * (runs - 1))], 4),
        "reports_cited": cited,
    }


def stream(graph: WeightedGraph, seed: int, steps: int) -> dict[str, Any]:
    params, rng = LeidenParams(), random.Random(seed)
    partition = rebuild(graph, params)
    worst, leaked, updates, rebuilds = 0.0, 0, [], []
    for step in range(steps):
        before = graph.nodes()
        touched = edit(graph, rng, step)
        began = time.perf_counter()
        partition = update(partition, graph, touched, params)
        updates.append(time.perf_counter() - began)
        began = time.perf_counter()
        reference = rebuild(graph, params)
        rebuilds.append(time.perf_counter() - began)
        ours, theirs = modularity(graph, partition.top()), modularity(graph, reference.top())
        worst = max(worst, (theirs - ours) / theirs)
        leaked += len((before - graph.nodes()) & members(partition))
    return {
        "seed": seed, "steps": steps, "worst_gap": round(worst, 5),
        "modularity": round(ours, 4), "rebuild_modularity": round(theirs, 4),
        "update_p50_s": round(statistics.median(updates), 3),
        "rebuild_p50_s": round(statistics.median(rebuilds), 3),
        "deleted_entities_in_communities": leaked,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    corpus = bench_scale.DATA / "2wikimultihopqa_hipporag" / "corpus.jsonl"
    with (
        tempfile.TemporaryDirectory() as tmp,
        bench_scale.SERVERS["thread"]("names") as (url, _, _),
    ):
        graph = asyncio.run(corpus_graph(bench_scale.corpus_settings(Path(tmp), url), corpus))
    print(json.dumps({"entities": len(graph.nodes()), "relations": len(graph.weights)}))
    for seed in args.seeds:
        copy = WeightedGraph(dict(graph.weights))
        print(json.dumps(stream(copy, seed, args.steps)), flush=True)


if __name__ == "__main__":
    main()
