"""Search-store benchmark: the embedded store against Elasticsearch at the same sizes.

Measures, per backend and corpus size: bulk indexing (chunks/s through `SearchStore.upsert`),
Retrieve latency p50/p99 of the real QueryEngine in `naive` (chunk search) and `mix` (chunks
plus entity and relation search and the graph expansion) modes, and, for Elasticsearch, the
recall@50 of kNN against exact search (what chose queries.CANDIDATE_FACTOR/MIN_CANDIDATES).
Data is synthetic (Zipf-distributed words) embedded with the hash embedder; the graph store
is the embedded one for both (Elasticsearch has no graph role). On demand, never timed in CI:

    .venv/bin/python -m tests.bench.bench_search_stores [--sizes 10000 100000] [--es-url URL]

Without --es-url (or RAGSTREAM_ES_URL) a node is started with tests/support/elasticsearch.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from elasticsearch import AsyncElasticsearch

from ragstream.common.models import Collection, GraphEdge, GraphNode, SearchFilter, SearchRecord
from ragstream.common.providers.embedding import HashEmbedder, hash_embed
from ragstream.common.storage.elastic import (
    ElasticCacheStore,
    ElasticDocumentStore,
    ElasticMentionStore,
    ElasticSearchStore,
    IndexLayout,
    ModelFingerprint,
)
from ragstream.common.storage.elastic import queries as es_queries
from ragstream.common.storage.protocols import SearchStore, Stores
from ragstream.common.storage.sqlite import Database, SqliteDocumentStore, SqliteSearchStore
from ragstream.common.storage.sqlite.graph import SqliteGraphStore
from ragstream.common.storage.sqlite.mentions import SqliteCacheStore, SqliteMentionStore
from ragstream.common.text.analyzer import analyze
from ragstream.common.timing import StageTimer
from ragstream.query.engine import QueryEngine
from ragstream.query.types import Mode, QueryInput, QueryOptions
from tests.support.elasticsearch import ElasticsearchNode

WS = "bench"
DIM = 384
VOCABULARY = 20_000
WORDS_PER_CHUNK = 80
BATCH = 500
QUERIES = 200
WARMUP = 20


@dataclass
class Corpus:
    chunks: list[SearchRecord]
    entities: list[SearchRecord]
    relations: list[SearchRecord]
    nodes: list[GraphNode]
    edges: list[GraphEdge]


def _records(
    kind: str, texts: list[str], extra: Callable[[int], dict[str, object]]
) -> list[SearchRecord]:
    vectors = hash_embed(texts, DIM)
    return [
        SearchRecord(
            id=f"{kind}{i}",
            workspace=WS,
            text=text,
            terms=tuple(analyze(text)),
            vector=vectors[i],
            doc_ids=(f"doc{i // 4}",),
            attrs=extra(i),
        )
        for i, text in enumerate(texts)
    ]


def corpus(size: int, seed: int = 7) -> Corpus:
    """`size` chunks of Zipf-distributed words; size/10 entities, each mentioned by the chunks
    i with i % entities == j; size/10 relations between neighbouring entities."""
    rng = np.random.default_rng(seed)
    words = rng.zipf(1.3, size=(size, WORDS_PER_CHUNK)) % VOCABULARY
    texts = [" ".join(f"w{w}" for w in row) for row in words]
    n_entities = max(size // 10, 2)
    chunks = _records("chunk", texts, lambda i: {"order": 0, "tokens": WORDS_PER_CHUNK})
    names = [f"entity{j}" for j in range(n_entities)]
    entity_texts = [f"{name} {texts[j][:200]}" for j, name in enumerate(names)]
    entities = _records("entity", entity_texts, lambda j: {"name": names[j], "type": "thing"})
    pairs = [(names[j], names[(j + 1) % n_entities]) for j in range(n_entities)]
    relation_texts = [f"{a} {b} {texts[-j - 1][:200]}" for j, (a, b) in enumerate(pairs)]
    relations = _records(
        "relation", relation_texts, lambda j: {"source": pairs[j][0], "target": pairs[j][1]}
    )
    mentioned = [
        tuple(f"chunk{i}" for i in range(j, size, n_entities)[:10]) for j in range(n_entities)
    ]
    nodes = [GraphNode(n, n, "thing", entity_texts[j], mentioned[j]) for j, n in enumerate(names)]
    edges = [
        GraphEdge(min(a, b), max(a, b), "k", relation_texts[j], 1.0, mentioned[j])
        for j, (a, b) in enumerate(pairs)
    ]
    return Corpus(chunks, entities, relations, nodes, edges)


async def load(stores: Stores, data: Corpus) -> float:
    """Writes the corpus; returns chunks/s of the chunk writes alone."""
    started = time.perf_counter()
    for start in range(0, len(data.chunks), BATCH):
        await stores.search.upsert(Collection.CHUNKS, data.chunks[start : start + BATCH])
    rate = len(data.chunks) / (time.perf_counter() - started)
    for collection, records in (
        (Collection.ENTITIES, data.entities),
        (Collection.RELATIONS, data.relations),
    ):
        for start in range(0, len(records), BATCH):
            await stores.search.upsert(collection, records[start : start + BATCH])
    await stores.graph.upsert_nodes(WS, data.nodes)
    await stores.graph.upsert_edges(WS, data.edges)
    refresh = getattr(stores.search, "refresh", None)
    if refresh is not None:
        await refresh()
    return rate


def options(mode: Mode, rng: random.Random, size: int) -> QueryOptions:
    entities = [f"entity{rng.randrange(max(size // 10, 2))}" for _ in range(2)]
    return QueryOptions(
        mode=mode, top_k=40, chunk_top_k=20, max_entity_tokens=6000, max_relation_tokens=8000,
        max_total_tokens=30000, related_chunk_number=5, chunk_pick_method="VECTOR",
        cosine_threshold=0.2, enable_rerank=False, min_rerank_score=0.0,
        only_need_context=True, only_need_prompt=False, response_type="",
        hl_keywords=(f"w{rng.randrange(50)}",), ll_keywords=tuple(entities),
    )  # fmt: skip


async def latency(engine: QueryEngine, data: Corpus, mode: Mode) -> tuple[float, float]:
    """p50 and p99 of Retrieve in ms over QUERIES queries (after WARMUP unmeasured ones)."""
    rng = random.Random(11)
    timings: list[float] = []
    for n in range(WARMUP + QUERIES):
        chunk = data.chunks[rng.randrange(len(data.chunks))]
        query = " ".join(rng.sample(chunk.terms, 6))
        q = QueryInput(WS, query, options(mode, rng, len(data.chunks)))
        started = time.perf_counter()
        await engine.retrieve(q, StageTimer())
        if n >= WARMUP:
            timings.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(timings, n=100)
    return cuts[49], cuts[98]


async def knn_recall(store: SearchStore, data: Corpus, factor: int, k: int = 50) -> float:
    """Mean recall@k of the store's kNN against exact top-k over the chunk vectors."""
    es_queries.CANDIDATE_FACTOR = factor
    matrix = np.stack([c.vector for c in data.chunks])
    rng = np.random.default_rng(3)
    recalls = []
    for i in rng.choice(len(data.chunks), 50, replace=False):
        query = hash_embed([" ".join(data.chunks[i].terms[:8])], DIM)[0]
        exact = {f"chunk{j}" for j in np.argsort(-(matrix @ query))[:k]}
        hits = await store.search_vector(Collection.CHUNKS, WS, query, SearchFilter(), k)
        recalls.append(len(exact & {h.record.id for h in hits}) / k)
    return float(np.mean(recalls))


@contextlib.asynccontextmanager
async def embedded(directory: Path) -> AsyncIterator[Stores]:
    async with await Database.open(directory) as db:
        yield Stores(
            search=await SqliteSearchStore.open(db), graph=await SqliteGraphStore.open(db),
            mentions=await SqliteMentionStore.open(db), docs=await SqliteDocumentStore.open(db),
            cache=await SqliteCacheStore.open(db),
        )  # fmt: skip


@contextlib.asynccontextmanager
async def elastic(url: str, directory: Path) -> AsyncIterator[Stores]:
    client = AsyncElasticsearch(url, request_timeout=120)
    layout = IndexLayout(f"bench{uuid.uuid4().hex[:8]}")
    try:
        async with await Database.open(directory) as db:
            yield Stores(
                search=await ElasticSearchStore.open(client, layout, ModelFingerprint("hash", DIM)),
                graph=await SqliteGraphStore.open(db),
                mentions=await ElasticMentionStore.open(client, layout),
                docs=await ElasticDocumentStore.open(client, layout),
                cache=await ElasticCacheStore.open(client, layout),
            )
    finally:
        found = await client.indices.get(index=f"{layout.prefix}-*")
        await client.indices.delete(index=",".join(found.body))
        await client.close()


async def run(sizes: list[int], url: str) -> None:
    print("backend        size   chunks/s  naive p50/p99 ms  mix p50/p99 ms  extra")
    for size in sizes:
        data = corpus(size)
        for name in ("embedded", "elasticsearch"):
            with tempfile.TemporaryDirectory() as tmp:
                opened = embedded(Path(tmp)) if name == "embedded" else elastic(url, Path(tmp))
                async with opened as stores:
                    rate = await load(stores, data)
                    engine = QueryEngine(stores, HashEmbedder(DIM), None)
                    naive = await latency(engine, data, Mode.NAIVE)
                    mix = await latency(engine, data, Mode.MIX)
                    extra = ""
                    if name == "elasticsearch":
                        recalls = [(f, await knn_recall(stores.search, data, f)) for f in (2, 4, 8)]
                        extra = " ".join(f"recall@50(x{f})={r:.3f}" for f, r in recalls)
            print(
                f"{name:13} {size:6d} {rate:9.0f}  {naive[0]:7.1f}/{naive[1]:<7.1f}"
                f"  {mix[0]:7.1f}/{mix[1]:<7.1f} {extra}",
                flush=True,
            )


@contextlib.contextmanager
def node(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    with ElasticsearchNode() as started:
        yield started.url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--es-url", default=os.environ.get("RAGSTREAM_ES_URL"))
    args = parser.parse_args()
    with node(args.es_url) as url:
        asyncio.run(run(args.sizes, url))


if __name__ == "__main__":
    main()
