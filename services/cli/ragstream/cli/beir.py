"""`ragstream eval beir`: nDCG@10 and recall@10/@100 on a BEIR dataset.

The corpus goes through the indexer's own chunk-and-write path into the configured search
backend (storage.search; each document is `title + " " + text`), in the workspace
`beir-<index key>`; queries go through the query service's own hybrid search (100
candidates from each search, fused with query.rrf_k), one at a time (the query embedded,
then searched), and each query's time is measured. A document's score is that of its best
chunk. The index is kept (for the embedded store in `--index-dir`), in a workspace named by
the index's identity (the set and the settings that decide what it holds, `eval_index.py`),
with a marker record once it is complete: the three retrievers can be compared without
embedding the corpus three times, and another set or other chunking or embedding settings
get an index of their own beside it, never a stale one.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from ragstream.cli.eval_index import SetKind, index_key
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange
from ragstream.common.metrics import ndcg_at_k, recall_at_k
from ragstream.common.models import Collection, DocState, DocumentRecord, SearchFilter
from ragstream.common.providers.embedding import Embedder, build_embedder
from ragstream.common.registry import Opening, open_stores
from ragstream.common.storage.protocols import SearchStore, Stores
from ragstream.common.text.analyzer import analyze
from ragstream.indexer.stages.chunk import chunk_document
from ragstream.indexer.stages.write import write_chunks
from ragstream.query.search import Retriever, SearchSpec, hybrid_search

WORKSPACE_PREFIX = "beir-"
"""An index lives in the workspace beir-<index key>."""
MARKER = "beir-index-complete"
"""Document-store record written once the whole corpus is indexed; holds the index key."""
BATCH = 64
out = Console(stderr=True)


@dataclass(frozen=True, slots=True)
class BeirData:
    corpus_path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


@dataclass(frozen=True, slots=True)
class Ranked:
    """Each query's ranked document ids, and the seconds its retrieval took."""

    rankings: dict[str, list[str]]
    seconds: dict[str, float]
    embedding: str
    built: bool = False
    """Whether this run built the index (False: an index already there was reused)."""


class DatasetError(ValueError):
    """The dataset folder is missing, incomplete or malformed; the message says which file."""


DATASET_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/{split}.tsv")


def open_dataset(data: Path, split: str) -> BeirData:
    """`load`, with a DatasetError naming the folder or file at fault instead of a traceback."""
    layout = "a BEIR dataset folder holds " + ", ".join(DATASET_FILES).format(split=split)
    if not data.is_dir():
        raise DatasetError(f"--data {data}: no such folder ({layout})")
    missing = [f for f in DATASET_FILES if not (data / f.format(split=split)).is_file()]
    if missing:
        names = ", ".join(f.format(split=split) for f in missing)
        raise DatasetError(f"--data {data}: {names} missing ({layout})")
    try:
        return load(data, split)
    except (OSError, ValueError, KeyError) as exc:  # JSONDecodeError is a ValueError
        problem = f"{type(exc).__name__}: {exc}"
        raise DatasetError(f"--data {data}: malformed dataset ({problem})") from None


def load(data: Path, split: str) -> BeirData:
    qrels: dict[str, dict[str, int]] = {}
    lines = (data / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
    for line in lines[1:]:
        query_id, doc_id, score = line.split("\t")
        qrels.setdefault(query_id, {})[doc_id] = int(score)
    queries = {}
    with (data / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["_id"] in qrels:
                queries[row["_id"]] = row["text"]
    return BeirData(data / "corpus.jsonl", queries, qrels)


def iter_corpus(path: Path) -> Iterator[tuple[str, str]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            yield row["_id"], f"{row.get('title', '')} {row['text']}".strip()


async def build_index(
    store: SearchStore, embedder: Embedder, corpus: Path, settings: Settings, workspace: str
) -> None:
    docs = list(iter_corpus(corpus))
    with Progress(console=out) as progress:
        task = progress.add_task(f"indexing {len(docs)} documents", total=len(docs))
        for start in range(0, len(docs), BATCH):
            batch = docs[start : start + BATCH]
            chunks, changes = [], {}
            for doc_id, text in batch:
                change = DocumentChange(workspace, doc_id, 1, False, text, doc_id)
                changes[doc_id] = change
                chunks.extend(
                    await chunk_document(
                        workspace, doc_id, text, doc_id, settings.chunking, embedder
                    )
                )
            # One write per batch: every chunk of a batch shares the eval's (empty) metadata.
            await write_chunks(chunks, changes[batch[0][0]], embedder, store)
            progress.advance(task, len(batch))


async def rank(
    store: SearchStore, embedder: Embedder, data: BeirData, retriever: Retriever, workspace: str
) -> dict[str, list[str]]:
    return (await timed_rank(store, embedder, data, retriever, workspace)).rankings


async def timed_rank(
    store: SearchStore,
    embedder: Embedder,
    data: BeirData,
    retriever: Retriever,
    workspace: str,
    rrf_k: int = 60,
) -> Ranked:
    """Each query embedded and searched on its own, timed from the embedding to the hits.

    One query runs untimed first, so the model's and the vector index's loading (on first
    use) count in no query's time."""

    async def search(text: str) -> list[str]:
        [vector] = await embedder.embed([text])
        spec = SearchSpec(
            workspace,
            analyze(text),
            vector,
            SearchFilter(),
            candidates=100,
            limit=100,
            rrf_k=rrf_k,
            retriever=retriever,
        )
        hits = await hybrid_search(store, Collection.CHUNKS, spec)
        return list(dict.fromkeys(hit.record.doc_ids[0] for hit in hits))

    rankings: dict[str, list[str]] = {}
    seconds: dict[str, float] = {}
    for text in list(data.queries.values())[:1]:
        await search(text)
    for query_id, text in data.queries.items():
        started = time.perf_counter()
        rankings[query_id] = await search(text)
        seconds[query_id] = time.perf_counter() - started
    return Ranked(rankings, seconds, embedder.name)


async def evaluate_beir(settings: Settings, data: BeirData, retriever: Retriever) -> Ranked:
    """Indexes the corpus unless a complete index is there, then ranks every query."""
    embedder = build_embedder(settings.embedding)
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(embedder.close)
        stores = await open_stores(Opening(settings, stack, embedder))
        workspace, built = await ensure_index(stores, embedder, data, settings)
        ranked = await timed_rank(
            stores.search, embedder, data, retriever, workspace, settings.query.rrf_k
        )
    return Ranked(ranked.rankings, ranked.seconds, ranked.embedding, built)


async def run_beir(
    settings: Settings,
    data_dir: Path,
    data: BeirData,
    split: str,
    retriever: Retriever,
    as_json: bool,
    index_dir: Path | None,
) -> None:
    """`data`: the dataset at `data_dir`, as `open_dataset` checked and read it."""
    if settings.storage.search == "sqlite":
        directory = index_dir or Path(settings.data_dir) / "beir-index"
        settings = settings.model_copy(update={"data_dir": directory})
    ranked = await evaluate_beir(settings, data, retriever)
    report = {
        "dataset": data_dir.name,
        "split": split,
        "retriever": retriever.value,
        "backend": settings.storage.search,
        "embedding": ranked.embedding,
        "queries": len(ranked.rankings),
        **scores(
            ranked.rankings, data.qrels, {"ndcg@10": 10}, {"recall@10": 10, "recall@100": 100}
        ),
    }
    if as_json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")


def scores(
    rankings: dict[str, list[str]],
    qrels: dict[str, dict[str, int]],
    ndcg: dict[str, int],
    recall: dict[str, int],
) -> dict[str, float]:
    """Mean nDCG and recall over the queries, at the cut-offs named (name: k)."""
    found: dict[str, float] = {}
    for name, k in ndcg.items():
        found[name] = _mean(ndcg_at_k(rankings[q], qrels[q], k) for q in rankings)
    for name, k in recall.items():
        found[name] = _mean(recall_at_k(rankings[q], qrels[q], k) for q in rankings)
    return found


async def ensure_index(
    stores: Stores, embedder: Embedder, data: BeirData, settings: Settings
) -> tuple[str, bool]:
    """The workspace of the index of `data` under `settings`, built there unless a complete
    one is; and whether it was built now."""
    key = index_key(settings, SetKind.BEIR, data.corpus_path.parent)
    workspace = WORKSPACE_PREFIX + key
    marker = await stores.docs.get(workspace, MARKER)
    if marker is not None and marker.content_hash == key:
        return workspace, False
    started = time.monotonic()
    await build_index(stores.search, embedder, data.corpus_path, settings, workspace)
    refresh = getattr(stores.search, "refresh", None)
    if refresh is not None:
        await refresh()  # backends that search only refreshed writes (Elasticsearch)
    done = DocumentRecord(workspace, MARKER, 1, DocState.PROCESSED, content_hash=key)
    await stores.docs.put(done)
    out.print(f"indexed in {time.monotonic() - started:.0f} s")
    return workspace, True


def _mean(values: Iterator[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
