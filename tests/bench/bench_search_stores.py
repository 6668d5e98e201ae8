"""Search-store benchmark: the embedded store against Elasticsearch at the same sizes.

Measures, per backend and corpus size: bulk indexing (chunks/s through `SearchStore.upsert`),
the build of the store (`build=`: the seconds of every write, the making of the synthetic
data left out, plus the first vector search of each collection, which loads or builds its
vector index; a reused store reports its index load alone), Retrieve latency p50/p95/p99
of the real QueryEngine in `naive` (chunk search) and `mix` (chunks plus entity and relation
search and the graph expansion) modes, and, for Elasticsearch, the
recall@50 of kNN against exact search (what chose queries.CANDIDATE_FACTOR/MIN_CANDIDATES).
Data is synthetic (Zipf-distributed words) embedded with the hash embedder; the graph store
is the embedded one for both (Elasticsearch has no graph role). On demand, never timed in CI:

    .venv/bin/python -m tests.bench.bench_search_stores [--sizes 10000 100000] [--es-url URL]

Without --es-url (or RAGSTREAM_ES_URL) a node is started with tests/support/elasticsearch.py;
`--backends embedded` needs none. `--store DIR` keeps the embedded store of each size in
DIR/embedded-<size> and reuses it when it is complete, so that two versions of the code can
be measured on one stored corpus (and a large one is loaded once); an interrupted load goes
on where it stopped.

Embedded store, 100k chunks, Retrieve p50 in ms, FTS5 bm25() (before) against postings with
MaxScore (after), on the same stored corpus with the same 40 queries per mode, the two
interleaved twice. The 2-core machine was shared (load 10 to 20), so wall times are about
five times the CPU times; CPU is the process time a query took, both search threads counted:

    mode   wall before -> after         CPU before -> after
    naive  1498, 1405  -> 250, 212      302, 265  -> 50, 46     (6x)
    mix    2279, 1560  -> 640, 635      428, 383  -> 163, 135   (2.7x)

Writes cost more CPU: 10k chunks upserted in 2.0 s of CPU with FTS5, 3.5 s with postings.

Then the postings cache, hits without terms and vector, graph chunks scored by the store and
cached line token counts (before -> after, ms, p50 wall / p95 wall (CPU p50)), one stored
100k corpus, the two versions run in turn three times (load average 10 to 12 on 2 cores);
results identical for 80 queries (chunks, scores, entities, relations):

    round  naive before -> after               mix before -> after
    1      155.6/-      (49.3) ->  98.2/-      (36.5)   231.0/-     (114.7) -> 100.2/-     (80.7)
    2       72.7/1123.3 (46.1) ->  82.0/257.7  (39.8)   299.2/1535.3 (136.5) -> 107.4/213.4 (81.9)
    3       47.4/643.3  (38.5) ->  39.9/131.2  (29.6)   162.7/930.4 (99.0)  ->  92.0/174.4 (62.7)

Round 3 is the final code (rounds 1 and 2 read a term's postings in full from 2048
candidates on). At 770k chunks (naive only: loading 1M stopped there after 85 minutes),
p50 wall 440 -> 245 ms, CPU 216 -> 175 ms, peak RSS 3.1 GB for both; the exact dense scan
(770k x 384 floats) and the postings of terms not cached yet take the CPU about equally.

Then the entity, relation and chunk searches running concurrently (engine.py) and the
budget's bound on the prompt (stages/budget.py), on a quiet machine (load average about 1):
commit 996a254 (before) against the new code (after), one stored 100k corpus, in turn twice,
p50 wall / p95 wall (CPU p50) in ms:

    round  naive before -> after            mix before -> after
    1      34.6/95.2 (38.4) -> 29.7/93.5 (37.9)    77.1/103.5 (85.4) -> 58.5/88.3 (82.8)
    2      30.8/95.4 (38.9) -> 35.5/111.3 (41.6)   89.1/127.2 (93.9) -> 70.4/110.9 (87.3)

Mix p50 falls 1.3x (naive does not change: it has one search), CPU barely: the gain is
the searches' overlap. The budget stage alone went from 8.6 to 1.0 ms p50 on mix. At 1M
chunks (the load finished, 100k entities and relations), p50 wall / p95 (CPU p50) in ms
and resident memory after the queries / peak in MB:

    code    naive                  mix                    RSS
    before  263.5/903.7 (337.5)    462.3/930.3 (563.7)    2,607 / 3,714
    after   231.9/875.1 (294.6)    324.6/883.6 (531.6)    2,874 / 3,831

Then the approximate index (storage/sqlite/ann.py) for collections of 200k vectors or more,
one stored 1M corpus (loaded in 17.5 minutes with its synthetic texts made on the way, the
chunk upserts at 2,038 chunks/s), one session on 2 cores; `--approximate-from 2000000` is
the exact scan on the same store. The approximate runs start from the index saved by the
previous run; recall@50 of the chunks' kNN against exact search over the bench's vectors:

    code                       naive                  mix                    RSS      recall@50
    exact                      104.3/381.2 (147.8)    191.0/549.2 (324.4)    3,670 / 4,674
    approximate (two runs)     63.9/405.9 (56.6)      121.5/416.0 (173.4)    1,807 / 2,142  0.994
                               43.6/329.9 (44.4)      108.0/385.6 (162.6)    1,747 / 2,144

A naive query then spends most of its time reading the postings of its common terms
(`lexical.SqlPostings.postings`, about 60% of the samples of a profile), the kNN search 3%.

Then postings that carry their workspace's number and their record's length (schema version
4: no join to the records), an exact index read 4,096 vectors at a time into the matrix it
keeps, and the BM25 searches started during the embedding: the 1M store copied, the copy
moved to version 4 on opening (140 s), the old code on the original and the new on the copy,
in turn twice:

    code     naive                  mix                    RSS
    before   96.6/546.9 (67.0)      137.5/393.7 (195.4)    1,911 / 2,179
    after    44.5/429.0 (42.8)      142.9/533.1 (210.1)    1,846 / 1,926
    before   73.3/507.8 (51.1)      112.7/367.5 (162.0)    1,888 / 2,235
    after    27.8/278.9 (29.9)      108.7/434.5 (157.7)    1,771 / 1,884

The same store built from nothing by the new code in one process (`build=704s (index 110s)`,
chunk upserts 1,878 chunks/s, 21.5 minutes in all with the synthetic data made on the way):
naive 42.6/547.0 (53.8), mix 128.5/420.1 (191.8), RSS 2,277 / 2,429 MB (the building
process keeps more than one that opens the built store).

Then the graph reads that seek each key (storage/sqlite/graph.py: the edges of keys and of
(source, target) pairs, which SQLite answered by scanning the workspace's whole edge range,
25 ms a read at 100k edges), records read as hits carry them, and the named entities read
during the embedding: 2867710 (before) against 8f573b0 (after) on the stored 1M corpus, in
turn twice:

    code     naive                  mix                    RSS
    before   36.3/394.8 (39.1)      126.8/481.4 (181.7)    1,730 / 1,865
    after    32.3/288.2 (35.8)       82.6/386.4 (110.0)    1,855 / 2,061
    before   34.3/441.8 (40.6)      130.9/457.1 (193.7)    1,850 / 1,982
    after    29.3/393.2 (36.6)       95.5/384.7 (124.1)    1,794 / 1,963

Then glibc's malloc arenas capped at two (common/arenas.py), as every `ragstream` command
does at its start and this bench does in `main`: two runs without the cap, one with it, on
the stored 1M corpus (`--sizes 1000000 --store DIR`):

    code     naive                  mix                    RSS
    default  45.4/301.8 (38.7)       85.5/395.3 (105.7)    1,974 / 2,078
    default  34.6/333.9 (48.7)       67.4/317.3 (93.2)     1,878 / 2,072
    capped   23.4/263.9 (29.6)       72.8/314.1 (97.2)     1,737 / 1,882
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from elasticsearch import AsyncElasticsearch

from ragstream.common.arenas import limit_malloc_arenas
from ragstream.common.models import Collection, GraphEdge, GraphNode, SearchFilter, SearchRecord
from ragstream.common.providers.embedding import HashEmbedder, hash_embed
from ragstream.common.storage.elastic import (
    ElasticCacheStore,
    ElasticCommunityStore,
    ElasticDocumentStore,
    ElasticMentionStore,
    ElasticSearchStore,
    IndexLayout,
    ModelFingerprint,
)
from ragstream.common.storage.elastic import queries as es_queries
from ragstream.common.storage.protocols import SearchStore, Stores
from ragstream.common.storage.sqlite import Database, SqliteDocumentStore, SqliteSearchStore
from ragstream.common.storage.sqlite.communities import SqliteCommunityStore
from ragstream.common.storage.sqlite.graph import SqliteGraphStore
from ragstream.common.storage.sqlite.mentions import SqliteCacheStore, SqliteMentionStore
from ragstream.common.storage.sqlite.search import APPROXIMATE_FROM
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
SEED = 7
BACKENDS = ("embedded", "elasticsearch")


def _texts(start: int, stop: int) -> list[str]:
    """Chunk texts start..stop-1: Zipf-distributed words, the same whatever the batching
    (each BATCH-aligned block has its own generator), so no text is ever kept for long."""
    texts: list[str] = []
    for block in range(start // BATCH, (stop - 1) // BATCH + 1):
        rng = np.random.default_rng([SEED, block])
        words = rng.zipf(1.3, size=(BATCH, WORDS_PER_CHUNK)) % VOCABULARY
        texts += [" ".join(f"w{w}" for w in row) for row in words]
    first = start // BATCH * BATCH
    return texts[start - first : stop - first]


@dataclass(frozen=True)
class Corpus:
    """`size` chunks; size/10 entities, entity j mentioned by the chunks i with
    i % entities == j; size/10 relations between neighbouring entities. Records are made
    batch by batch when written, so the corpus costs no memory of its own."""

    size: int

    @property
    def entities(self) -> int:
        return max(self.size // 10, 2)

    def chunk_terms(self, i: int) -> list[str]:
        return analyze(_texts(i, i + 1)[0])

    def chunks(self, start: int, stop: int) -> list[SearchRecord]:
        extra: dict[str, object] = {"order": 0, "tokens": WORDS_PER_CHUNK}
        return _records("chunk", start, _texts(start, stop), lambda i: extra)

    def entity_texts(self, start: int, stop: int) -> list[str]:
        return [
            f"entity{j} {t[:200]}"
            for j, t in zip(range(start, stop), _texts(start, stop), strict=True)
        ]

    def relation_texts(self, start: int, stop: int) -> list[str]:
        tail = _texts(self.size - stop, self.size - start)[::-1]
        return [
            f"{a} {b} {t[:200]}" for (a, b), t in zip(self.pairs(start, stop), tail, strict=True)
        ]

    def pairs(self, start: int, stop: int) -> list[tuple[str, str]]:
        n = self.entities
        return [(f"entity{j}", f"entity{(j + 1) % n}") for j in range(start, stop)]

    def mentioned(self, j: int) -> tuple[str, ...]:
        return tuple(f"chunk{i}" for i in range(j, self.size, self.entities)[:10])


def _records(
    kind: str, start: int, texts: list[str], extra: Callable[[int], dict[str, object]]
) -> list[SearchRecord]:
    vectors = hash_embed(texts, DIM)
    return [
        SearchRecord(
            id=f"{kind}{i}",
            workspace=WS,
            text=text,
            terms=tuple(analyze(text)),
            vector=vectors[i - start],
            doc_ids=(f"doc{i // 4}",),
            attrs=extra(i),
        )
        for i, text in enumerate(texts, start)
    ]


class Writes:
    """Seconds spent in store writes, apart from making the synthetic data."""

    def __init__(self) -> None:
        self.seconds = 0.0

    async def __call__(self, write: Awaitable[None]) -> None:
        started = time.perf_counter()
        await write
        self.seconds += time.perf_counter() - started


async def load(stores: Stores, data: Corpus) -> tuple[float, float]:
    """Writes the corpus, continuing a kept store where an interrupted load stopped (each
    batch is one transaction, and writing a batch again changes nothing); returns chunks/s
    of the chunk upserts alone, and the seconds of every write (chunks, entities, relations,
    graph), the bench's making of its synthetic texts and vectors left out."""
    chunk_writes, writes = Writes(), Writes()
    first = await _written(stores, Collection.CHUNKS)
    for start in range(first, data.size, BATCH):
        chunks = data.chunks(start, min(start + BATCH, data.size))
        await chunk_writes(stores.search.upsert(Collection.CHUNKS, chunks))
    rate = (data.size - first) / chunk_writes.seconds if chunk_writes.seconds else math.nan
    for start in range(await _written(stores, Collection.ENTITIES), data.entities, BATCH):
        await _load_graph_batch(stores, data, start, min(start + BATCH, data.entities), writes)
    refresh = getattr(stores.search, "refresh", None)
    if refresh is not None:
        await writes(refresh())
    return rate, chunk_writes.seconds + writes.seconds


async def first_search_s(stores: Stores) -> float:
    """Seconds of the first vector search of each collection: what loads or builds the
    vector indexes (an approximate one from the stored vectors when none was saved)."""
    started = time.perf_counter()
    for collection in (Collection.CHUNKS, Collection.ENTITIES, Collection.RELATIONS):
        await stores.search.search_vector(
            collection, WS, hash_embed(["w1"], DIM)[0], SearchFilter(), 1
        )
    return time.perf_counter() - started


async def _written(stores: Stores, collection: Collection) -> int:
    """Where to go on writing `collection`: the start of the last batch found written."""
    return max(await stores.search.count(collection, WS) // BATCH * BATCH - BATCH, 0)


async def _load_graph_batch(
    stores: Stores, data: Corpus, start: int, stop: int, writes: Writes
) -> None:
    names = [f"entity{j}" for j in range(start, stop)]
    entity_texts, relation_texts = data.entity_texts(start, stop), data.relation_texts(start, stop)
    pairs = data.pairs(start, stop)
    entities = _records(
        "entity", start, entity_texts, lambda j: {"name": f"entity{j}", "type": "thing"}
    )
    relations = _records(
        "relation",
        start,
        relation_texts,
        lambda j: {"source": pairs[j - start][0], "target": pairs[j - start][1]},
    )
    await writes(stores.search.upsert(Collection.ENTITIES, entities))
    await writes(stores.search.upsert(Collection.RELATIONS, relations))
    nodes = [
        GraphNode(n, n, "thing", text, data.mentioned(j))
        for j, n, text in zip(range(start, stop), names, entity_texts, strict=True)
    ]
    edges = [
        GraphEdge(min(a, b), max(a, b), "k", text, 1.0, data.mentioned(j))
        for j, (a, b), text in zip(range(start, stop), pairs, relation_texts, strict=True)
    ]
    await writes(stores.graph.upsert_nodes(WS, nodes))
    await writes(stores.graph.upsert_edges(WS, edges))


def options(mode: Mode, rng: random.Random, size: int) -> QueryOptions:
    entities = [f"entity{rng.randrange(max(size // 10, 2))}" for _ in range(2)]
    return QueryOptions(
        mode=mode, top_k=40, chunk_top_k=20, max_entity_tokens=6000, max_relation_tokens=8000,
        max_total_tokens=30000, related_chunk_number=5, chunk_pick_method="VECTOR",
        cosine_threshold=0.2, enable_rerank=False, min_rerank_score=0.0,
        only_need_context=True, only_need_prompt=False, response_type="",
        hl_keywords=(f"w{rng.randrange(50)}",), ll_keywords=tuple(entities),
    )  # fmt: skip


async def latency(
    engine: QueryEngine, data: Corpus, mode: Mode, queries: int
) -> tuple[float, float, float, float]:
    """p50, p95 and p99 of Retrieve in ms over `queries` queries (after WARMUP unmeasured ones),
    and the p50 of the process CPU time a query takes: on a machine that others are busy
    with, wall times grow with the wait for a core, CPU times do not."""
    rng = random.Random(11)
    inputs = []
    for _ in range(WARMUP + queries):
        query = " ".join(rng.sample(data.chunk_terms(rng.randrange(data.size)), 6))
        inputs.append(QueryInput(WS, query, options(mode, rng, data.size)))
    timings: list[float] = []
    cpu: list[float] = []
    for n, q in enumerate(inputs):
        started, used = time.perf_counter(), time.process_time()
        await engine.retrieve(q, StageTimer())
        if n >= WARMUP:
            timings.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - used) * 1000)
    cuts = statistics.quantiles(timings, n=100)
    return cuts[49], cuts[94], cuts[98], statistics.median(cpu)


async def knn_recall(
    store: SearchStore,
    data: Corpus,
    factor: int | None = None,
    k: int = 50,
    collection: Collection = Collection.CHUNKS,
) -> float:
    """Mean recall@k of the store's kNN against exact top-k over the collection's vectors
    (queries: 8 words of a chunk); `factor`: Elasticsearch's candidates per result."""
    if factor is not None:
        es_queries.CANDIDATE_FACTOR = factor
    kind, count, texts = {
        Collection.CHUNKS: ("chunk", data.size, _texts),
        Collection.ENTITIES: ("entity", data.entities, data.entity_texts),
        Collection.RELATIONS: ("relation", data.entities, data.relation_texts),
    }[collection]
    matrix = np.concatenate(
        [hash_embed(texts(s, min(s + BATCH, count)), DIM) for s in range(0, count, BATCH)]
    )
    ids = [f"{kind}{j}" for j in range(count)]
    rng = np.random.default_rng(3)
    recalls = []
    for i in rng.choice(data.size, 50, replace=False):
        query = hash_embed([" ".join(data.chunk_terms(int(i))[:8])], DIM)[0]
        exact = {ids[j] for j in np.argsort(-(matrix @ query))[:k]}
        hits = await store.search_vector(collection, WS, query, SearchFilter(), k)
        recalls.append(len(exact & {h.record.id for h in hits}) / k)
    return float(np.mean(recalls))


async def approximate_recalls(store: SearchStore, data: Corpus, approximate_from: int) -> str:
    """recall@50 of each collection searched by its approximate index."""
    sizes = {
        Collection.CHUNKS: data.size,
        Collection.ENTITIES: data.entities,
        Collection.RELATIONS: data.entities,
    }
    recalls = [
        f" recall@50({c.value})={await knn_recall(store, data, collection=c):.3f}"
        for c, n in sizes.items()
        if n >= approximate_from
    ]
    return "".join(recalls)


def memory_mb() -> tuple[float, float]:
    """This process's resident memory now and at its peak, in MB (Linux)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return tuple(int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM"))  # type: ignore[return-value]


@contextlib.asynccontextmanager
async def embedded(
    directory: Path, approximate_from: int, threads: tuple[int, int] = (1, 1)
) -> AsyncIterator[Stores]:
    reader_threads, scan_threads = threads
    opened = await Database.open(
        directory, reader_threads=reader_threads, scan_threads=scan_threads
    )
    async with opened as db:
        search = await SqliteSearchStore.open(db, approximate_from)
        yield Stores(
            search=search, graph=await SqliteGraphStore.open(db),
            mentions=await SqliteMentionStore.open(db), docs=await SqliteDocumentStore.open(db),
            cache=await SqliteCacheStore.open(db),
            communities=await SqliteCommunityStore.open(db),
        )  # fmt: skip
        await search.close()  # saves an approximate index beside the database


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
                communities=await ElasticCommunityStore.open(client, layout),
            )
    finally:
        found = await client.indices.get(index=f"{layout.prefix}-*")
        await client.indices.delete(index=",".join(found.body))
        await client.close()


LOADED = "loaded"
"""Marks a kept store directory whose corpus was written completely."""


@contextlib.contextmanager
def directory(kept: Path | None, name: str, size: int) -> Iterator[tuple[Path, bool]]:
    """(where the stores live, whether the corpus is already there)."""
    if kept is None or name != "embedded":
        with tempfile.TemporaryDirectory() as tmp:
            yield Path(tmp), False
        return
    path = kept / f"embedded-{size}"
    path.mkdir(parents=True, exist_ok=True)
    loaded = (path / LOADED).exists()
    yield path, loaded


async def run(
    sizes: list[int],
    backends: list[str],
    url: str | None,
    queries: int,
    kept: Path | None,
    approximate_from: int = APPROXIMATE_FROM,
    threads: tuple[int, int] = (1, 1),
) -> None:
    print(
        "backend        size   chunks/s  naive p50/p95/p99 (cpu p50) ms"
        "  mix p50/p95/p99 (cpu p50) ms  RSS MB (before load/after queries/peak)  extra"
    )
    for size in sizes:
        data = Corpus(size)
        for name in backends:
            before = memory_mb()[0]
            with directory(kept, name, size) as (tmp, loaded):
                opened = (
                    embedded(tmp, approximate_from, threads)
                    if name == "embedded"
                    else elastic(url or "", tmp)
                )
                async with opened as stores:
                    rate, written_s = (math.nan, math.nan) if loaded else await load(stores, data)
                    if kept is not None and not loaded:
                        (tmp / LOADED).touch()
                    indexed_s = await first_search_s(stores)
                    engine = QueryEngine(stores, HashEmbedder(DIM), None)
                    naive = await latency(engine, data, Mode.NAIVE, queries)
                    mix = await latency(engine, data, Mode.MIX, queries)
                    after, peak = memory_mb()
                    extra = f"build={written_s + indexed_s:.0f}s (index {indexed_s:.0f}s)"
                    if name == "elasticsearch":
                        recalls = [(f, await knn_recall(stores.search, data, f)) for f in (2, 4, 8)]
                        extra += " " + " ".join(f"recall@50(x{f})={r:.3f}" for f, r in recalls)
                    else:
                        extra += await approximate_recalls(stores.search, data, approximate_from)
            print(
                f"{name:13} {size:7d} {rate:9.0f}  {_ms(naive)}  {_ms(mix)}"
                f"  {before:7.0f}/{after:7.0f}/{peak:7.0f}  {extra}",
                flush=True,
            )


def _ms(figures: tuple[float, float, float, float]) -> str:
    p50, p95, p99, cpu = figures
    return f"{p50:7.1f}/{p95:.1f}/{p99:<7.1f} ({cpu:6.1f})"


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
    parser.add_argument(
        "--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS),
        help="embedded alone needs no Elasticsearch node",
    )  # fmt: skip
    parser.add_argument("--queries", type=int, default=QUERIES, help="measured per mode")
    parser.add_argument("--es-url", default=os.environ.get("RAGSTREAM_ES_URL"))
    parser.add_argument(
        "--store", type=Path, help="keep (and reuse) the embedded stores in this directory"
    )
    parser.add_argument(
        "--approximate-from", type=int, default=APPROXIMATE_FROM,
        help="embedded: vectors from which dense search is approximate (a size above the "
        "largest measures the exact scan)",
    )  # fmt: skip
    parser.add_argument(
        "--reader-threads", type=int, default=1,
        help="embedded: the database's reader threads (storage.reader_threads)",
    )  # fmt: skip
    parser.add_argument(
        "--scan-threads", type=int, default=1,
        help="embedded: the threads of its dense searches (storage.scan_threads)",
    )  # fmt: skip
    args = parser.parse_args()
    limit_malloc_arenas()  # as the CLI does at a served process's start
    threads = (args.reader_threads, args.scan_threads)
    common = (args.queries, args.store, args.approximate_from, threads)
    if "elasticsearch" not in args.backends:
        asyncio.run(run(args.sizes, args.backends, None, *common))
        return
    with node(args.es_url) as url:
        asyncio.run(run(args.sizes, args.backends, url, *common))


if __name__ == "__main__":
    main()
