"""Reranking benchmark: SciFact nDCG@10 of BM25 retrieval, without and with reranking.

The retrieval is `ragstream eval beir`'s own (load, index, rank with the bm25 retriever; the
hash embedder keeps indexing quick, and bm25 does not use it). The top `--top` documents of
each query are then reranked by the real `HttpReranker` through the rerank test server, which
scores by BM25 over the analyzer's terms: with statistics from the whole corpus (standing in for
the term knowledge a trained model brings), and with statistics from each request's documents
alone (what the server sees of the corpus). Long abstracts are
sliced to the reranker's window and their slice scores aggregated as configured. On demand,
never timed in CI:

    .venv/bin/python -m tests.bench.bench_rerank_scifact [--data DIR] [--top 50]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ragstream.cli.beir import BeirData, ensure_index, iter_corpus, load, rank
from ragstream.common.config import load_settings
from ragstream.common.config_rerank import RerankConfig
from ragstream.common.metrics import ndcg_at_k, recall_at_k
from ragstream.common.providers.embedding import build_embedder
from ragstream.common.providers.rerank import HttpReranker
from ragstream.common.registry import Opening, open_stores
from ragstream.query.search import Retriever
from ragstream.testing.rerank_server import Bm25Scorer, RerankTestServer, Scorer, TermStats

DEFAULT_DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact"


async def bm25_rankings(data: BeirData, index_dir: Path) -> dict[str, list[str]]:
    settings = load_settings(None, data_dir=index_dir, embedding={"provider": "hash"})
    embedder = build_embedder(settings.embedding)
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(embedder.close)
        stores = await open_stores(Opening(settings, stack, embedder))
        workspace, _ = await ensure_index(stores, embedder, data, settings)
        return await rank(stores.search, embedder, data, Retriever.BM25, workspace)


async def reranked(
    rankings: dict[str, list[str]],
    data: BeirData,
    texts: dict[str, str],
    cfg: RerankConfig,
    top: int,
) -> dict[str, list[str]]:
    """Each ranking with its first `top` documents reordered by the reranker."""
    reranker = HttpReranker(cfg)
    result: dict[str, list[str]] = {}
    try:
        for query_id, ranking in rankings.items():
            head = ranking[:top]
            scores = await reranker.rerank(data.queries[query_id], [texts[d] for d in head])
            order = sorted(range(len(head)), key=lambda i: -scores[i])
            result[query_id] = [head[i] for i in order] + ranking[top:]
    finally:
        await reranker.close()
    return result


def report(name: str, rankings: dict[str, list[str]], data: BeirData, seconds: float) -> None:
    ndcg = statistics.fmean(ndcg_at_k(rankings[q], data.qrels[q], 10) for q in rankings)
    recall = statistics.fmean(recall_at_k(rankings[q], data.qrels[q], 10) for q in rankings)
    print(f"{name:<50} nDCG@10 {ndcg:.4f}  recall@10 {recall:.4f}  {seconds:6.1f} s", flush=True)


async def run(args: argparse.Namespace) -> None:
    data = load(args.data, args.split)
    texts = dict(iter_corpus(data.corpus_path))
    with tempfile.TemporaryDirectory() as scratch:
        started = time.monotonic()
        rankings = await bm25_rankings(data, args.index_dir or Path(scratch))
        print(f"{len(rankings)} queries, top {args.top} reranked")
        report("bm25 (no rerank)", rankings, data, time.monotonic() - started)
    scorers: list[tuple[str, Scorer]] = [
        ("corpus statistics", Bm25Scorer(TermStats.of(texts.values()))),
        ("request statistics", Bm25Scorer()),
    ]
    async with RerankTestServer() as server:
        for label, scorer in scorers:
            server.set_scorer(scorer)
            for provider in args.providers:
                cfg = RerankConfig.model_validate(
                    {
                        "provider": provider,
                        "model": "bm25-test",
                        "base_url": server.url(provider),
                        "aggregation": args.aggregation,
                        "window_tokens": args.window,
                    }
                )
                started = time.monotonic()
                result = await reranked(rankings, data, texts, cfg, args.top)
                name = f"bm25 + rerank ({provider}, {label}, {args.aggregation})"
                report(name, result, data, time.monotonic() - started)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", default="test")
    parser.add_argument("--top", type=int, default=50)
    parser.add_argument("--aggregation", choices=["max", "mean", "first"], default="max")
    parser.add_argument("--window", type=int, default=480)
    parser.add_argument("--providers", nargs="+", default=["jina", "aliyun"])
    parser.add_argument("--index-dir", type=Path, help="keep (or reuse) the index here")
    asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
