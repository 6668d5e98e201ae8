"""`ragstream eval multihop`: passage recall@2 and @5 of a query mode on a multi-hop set.

Passages go through the whole indexing pipeline (chunks, extraction, graph merge) on the
embedded backends; questions go through the query service's own retrieval, each timed. A
passage's rank is that of its first chunk in the context. Recall@k as in HippoRAG: the mean
over questions of |gold in top k| / |gold|.

The index stays in its directory (`--index-dir`) and is reused by later runs, with a marker
naming its identity (the set and the indexing settings, `eval_index.py`). A directory that
holds the index of another set or of other settings is refused with a one-line error, since
reusing it would report that index's figures under the new settings.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from ragstream.cli.beir import BeirData, Ranked, scores
from ragstream.cli.eval_index import IndexMismatchError, SetKind, index_key
from ragstream.cli.local_index import publish, running_indexer, wait_current
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange
from ragstream.common.timing import StageTimer
from ragstream.query.main import build_engine
from ragstream.query.transport.convert import query_options
from ragstream.query.types import Mode, QueryInput
from ragstream.v1 import query_pb2

WORKSPACE = "multihop"
out = Console(stderr=True)


def passages(corpus: Path) -> Iterator[DocumentChange]:
    with corpus.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            # The title is a paragraph of its own: the extractor takes a repeated title as the
            # passage's subject.
            text = f"{row.get('title', '')}\n\n{row['text']}".strip()
            yield DocumentChange(WORKSPACE, row["_id"], 1, False, text, row["_id"])


async def evaluate_multihop(settings: Settings, data: BeirData, mode: Mode) -> Ranked:
    """Indexes the passages into settings.data_dir unless done before, then retrieves."""
    key = index_key(settings, SetKind.MULTIHOP, data.corpus_path.parent)
    marker = settings.data_dir / "INDEX_COMPLETE"
    built = not marker.exists()
    if not built and marker.read_text(encoding="utf-8").strip() != key:
        raise IndexMismatchError(
            f"{settings.data_dir} holds the index of another set or of other chunking, "
            "embedding or extraction settings: pass another --index-dir, or remove that one"
        )
    async with running_indexer(settings) as backends:
        if built:
            started = time.monotonic()
            count = await publish(backends, passages(data.corpus_path))
            out.print(f"indexing {count} passages (chunks, graph) ...")
            await wait_current(settings, backends)
            marker.write_text(key, encoding="utf-8")
            out.print(f"indexed in {time.monotonic() - started:.0f} s")
        engine = build_engine(settings, backends)
        options = replace(
            query_options(query_pb2.QueryParams(chunk_top_k=10), settings.query), mode=mode
        )
        rankings: dict[str, list[str]] = {}
        seconds: dict[str, float] = {}
        for query_id, text in data.queries.items():
            began = time.perf_counter()
            retrieval = await engine.retrieve(QueryInput(WORKSPACE, text, options), StageTimer())
            seconds[query_id] = time.perf_counter() - began
            rankings[query_id] = list(dict.fromkeys(c.doc_id for c in retrieval.chunks))
    return Ranked(rankings, seconds, backends.providers.embeddings.name, built)


async def run_multihop(
    settings: Settings, data_dir: Path, data: BeirData, mode: Mode, as_json: bool
) -> None:
    """`data`: the set at `data_dir`, as `open_dataset` checked and read it (split test)."""
    ranked = await evaluate_multihop(settings, data, mode)
    qrels = data.qrels
    report = {
        "dataset": data_dir.name, "mode": mode.value, "queries": len(ranked.rankings),
        "embedding": ranked.embedding,
        **scores(ranked.rankings, qrels, {}, {"recall@2": 2, "recall@5": 5}),
    }  # fmt: skip
    if as_json:
        print(json.dumps(report))
    else:
        for key, value in report.items():
            print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")
