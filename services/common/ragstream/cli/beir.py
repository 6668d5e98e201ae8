"""`ragstream eval beir`: nDCG@10 and recall@10/@100 on a BEIR dataset.

The corpus goes through the indexer's own chunk-and-write path into the embedded store
(each document is `title + " " + text`); queries go through the query service's own hybrid
search. A document's score is that of its best chunk. `--index-dir` keeps the index, so
the three retrievers can be compared without embedding the corpus three times.
"""

from __future__ import annotations

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
from ragstream.common.models import Collection, SearchFilter
from ragstream.common.providers.embedding import Embedder, build_embedder
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.search import SqliteSearchStore
from ragstream.common.text.analyzer import analyze
from ragstream.indexer.stages.chunk import chunk_document
from ragstream.indexer.stages.write import write_chunks
from ragstream.query.stages.retrieve import Retriever, SearchSpec, hybrid_search

WORKSPACE = "beir"
BATCH = 64
out = Console(stderr=True)


@dataclass(frozen=True, slots=True)
class BeirData:
    corpus_path: Path
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


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
                chunks.extend(chunk_document(WORKSPACE, doc_id, text, doc_id, settings.chunking))
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
    split: str,
    retriever: str,
    as_json: bool,
    index_dir: Path | None,
) -> None:
    data = load(data_dir, split)
    embedder = build_embedder(settings.embedding)
    directory = index_dir or Path(settings.data_dir) / "beir-index"
    marker = directory / "INDEX_COMPLETE"
    async with await Database.open(directory) as db:
        store = await SqliteSearchStore.open(db)
        if not marker.exists() or marker.read_text() != embedder.name:
            started = time.monotonic()
            await build_index(store, embedder, data.corpus_path, settings)
            marker.write_text(embedder.name)
            out.print(f"indexed in {time.monotonic() - started:.0f} s")
        rankings = await rank(store, embedder, data, Retriever(retriever))
    report = {
        "dataset": data_dir.name,
        "split": split,
        "retriever": retriever,
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


def _mean(values: Iterator[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
