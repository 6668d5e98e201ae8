"""`ragstream eval beir`: nDCG@10 and recall@10/@100 on a BEIR dataset.

The corpus goes through the indexer's own chunk-and-write path into the configured search
backend (storage.search; each document is `title + " " + text`), in the workspace `beir`;
queries go through the query service's own hybrid search. A document's score is that of its
best chunk. The index is kept (for the embedded store in `--index-dir`), with a marker record
naming the embedding model, so the three retrievers can be compared without embedding the
corpus three times.
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
from ragstream.query.stages.retrieve import Retriever, SearchSpec, hybrid_search

WORKSPACE = "beir"
MARKER = "beir-index-complete"
"""Document-store record written once the whole corpus is indexed; names the model."""
BATCH = 64
out = Console(stderr=True)


@dataclass(frozen=True, slots=True)
class BeirData:
    corpus_path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


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
    store: SearchStore, embedder: Embedder, corpus: Path, settings: Settings
) -> None:
    docs = list(iter_corpus(corpus))
    with Progress(console=out) as progress:
        task = progress.add_task(f"indexing {len(docs)} documents", total=len(docs))
        for start in range(0, len(docs), BATCH):
            batch = docs[start : start + BATCH]
            chunks, changes = [], {}
            for doc_id, text in batch:
                change = DocumentChange(WORKSPACE, doc_id, 1, False, text, doc_id)
                changes[doc_id] = change
                chunks.extend(
                    await chunk_document(
                        WORKSPACE, doc_id, text, doc_id, settings.chunking, embedder
                    )
                )
            # One write per batch: every chunk of a batch shares the eval's (empty) metadata.
            await write_chunks(chunks, changes[batch[0][0]], embedder, store)
            progress.advance(task, len(batch))


async def rank(
    store: SearchStore, embedder: Embedder, data: BeirData, retriever: Retriever
) -> dict[str, list[str]]:
    ids = list(data.queries)
    vectors = await embedder.embed([data.queries[q] for q in ids])
    rankings: dict[str, list[str]] = {}
    for query_id, vector in zip(ids, vectors, strict=True):
        spec = SearchSpec(
            WORKSPACE,
            analyze(data.queries[query_id]),
            vector,
            SearchFilter(),
            candidates=100,
            limit=100,
            retriever=retriever,
        )
        ranked: list[str] = []
        for hit in await hybrid_search(store, Collection.CHUNKS, spec):
            doc = hit.record.doc_ids[0]
            if doc not in ranked:
                ranked.append(doc)
        rankings[query_id] = ranked
    return rankings


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
    embedder = build_embedder(settings.embedding)
    if settings.storage.search == "sqlite":
        directory = index_dir or Path(settings.data_dir) / "beir-index"
        settings = settings.model_copy(update={"data_dir": directory})
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(embedder.close)
        stores = await open_stores(Opening(settings, stack, embedder))
        await ensure_index(stores, embedder, data.corpus_path, settings)
        rankings = await rank(stores.search, embedder, data, retriever)
    report = {
        "dataset": data_dir.name,
        "split": split,
        "retriever": retriever,
        "backend": settings.storage.search,
        "embedding": embedder.name,
        "queries": len(rankings),
        "ndcg@10": _mean(ndcg_at_k(rankings[q], data.qrels[q], 10) for q in rankings),
        "recall@10": _mean(recall_at_k(rankings[q], data.qrels[q], 10) for q in rankings),
        "recall@100": _mean(recall_at_k(rankings[q], data.qrels[q], 100) for q in rankings),
    }
    if as_json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")


async def ensure_index(
    stores: Stores, embedder: Embedder, corpus: Path, settings: Settings
) -> None:
    """Builds the index unless a complete one for this embedding model is there."""
    marker = await stores.docs.get(WORKSPACE, MARKER)
    if marker is not None and marker.content_hash == embedder.name:
        return
    started = time.monotonic()
    await build_index(stores.search, embedder, corpus, settings)
    refresh = getattr(stores.search, "refresh", None)
    if refresh is not None:
        await refresh()  # backends that search only refreshed writes (Elasticsearch)
    done = DocumentRecord(WORKSPACE, MARKER, 1, DocState.PROCESSED, content_hash=embedder.name)
    await stores.docs.put(done)
    out.print(f"indexed in {time.monotonic() - started:.0f} s")


def _mean(values: Iterator[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
