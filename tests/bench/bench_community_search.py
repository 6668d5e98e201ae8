"""What the community reports' vectors are made from: the report's whole text, or less.

A multi-hop set's passages (MuSiQue by default) are indexed with the offline defaults, one
document per passage as `ragstream eval multihop` indexes them, and the community step
writes a report per community. Then, per variant of the reports' vectors, every report is
embedded again (timed) and written back, and each question whose supporting passages are
all indexed goes through the `community` mode's retrieval offline (hybrid search of the
reports, then the selection from the top level down, `community_search.py`) and through a
dense search of the reports alone (top 8). A report holds the passages its members come
from. Printed per variant: the seconds to embed the reports; over the questions, the mean
share of the supporting passages that the chosen reports hold, and how many passages they
hold in all (a question answered by reading half the corpus has found nothing), the same
two for the dense search; and how alike the chosen reports are to the whole text's
(mean Jaccard). A benchmark, run on demand:

    .venv/bin/python -m tests.bench.bench_community_search [--data DIR] [--limit N]

The variants: `whole`, the report's text as its search record holds it (title, summary,
findings; about 1,000 characters, MiniLM reads its first 256 word pieces); `head`, title
and summary; `cut128`, the whole text cut at 128 word pieces (the length MiniLM was
fine-tuned at); `first128`, its first 128 tokens of the project's tiktoken encoding (a cut
that works for any embedding provider); `members`, the normalized mean of the members'
entity vectors (no model run). Measured on 2026-12-07, all 1,890 MuSiQue passages (2,499
reports, 100 questions):

    variant   embed s   chosen share / passages   dense share / passages   Jaccard
    whole     35.1      0.476 / 140.1             0.799 / 51.5             -
    head       9.4      0.460 / 153.4             0.711 / 44.6             0.58
    cut128    19.6      0.482 / 140.6             0.738 / 59.8             0.69
    members    1.5      0.682 / 185.6             0.811 / 159.0            0.48

A later run of the same code, with `first128` added (embed s: whole 28.9, cut128 14.6,
first128 13.8): every other figure the same, and `first128` 0.452 / 145.4 chosen, 0.723 /
53.2 dense, Jaccard 0.69. The two cuts at about 128 pieces differ by 0.03 in the chosen
share, about what separates either from the whole text: the selection's share moves that
much with the vectors, while the dense search loses 0.06 to 0.08 with any cut.

Embedding the reports is 35 s of a 260 s indexing. The shorter texts cost the dense search
0.06 to 0.09 of its share, and the members' mean finds more only by holding three times the
passages, so the reports keep their whole text's vectors. On the first 1,000 passages
(52 questions) the variants were closer (dense 0.788, 0.800, 0.821, 0.822): 100 questions
are the figure to go by.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ragstream.cli.beir import load
from ragstream.cli.local_index import publish, running_indexer, wait_current
from ragstream.cli.multihop import WORKSPACE, passages
from ragstream.common.config import load_settings
from ragstream.common.models import Collection, SearchFilter, SearchRecord, Vector
from ragstream.common.providers.minilm import MiniLMEmbedder
from ragstream.common.providers.vectors import Matrix, l2_normalize
from ragstream.common.registry import Backends
from ragstream.common.text.tokens import encoding
from ragstream.query.community_search import CommunityBudget, CommunitySearch

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "multihop" / "musique_hipporag_100"
DENSE_TOP = CommunityBudget().max_reports
Vectors = Callable[[list[SearchRecord]], Awaitable[Matrix]]


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    gold: frozenset[str]
    vector: Vector


def head(record: SearchRecord) -> str:
    """The report's title and summary: its text's first two lines."""
    return "\n".join(record.text.split("\n")[:2])


def first_tokens(text: str, count: int = 128) -> str:
    """The text's first `count` tokens of the project's tiktoken encoding, cut at a
    character's end: a cut any embedding provider can be given."""
    codec = encoding()
    tokens = codec.encode_ordinary(text)
    return codec.decode_bytes(tokens[:count]).decode("utf-8", errors="ignore")


def held(gold: frozenset[str], records: list[SearchRecord]) -> tuple[float, int]:
    """The share of `gold` the records' passages hold, and how many passages they hold."""
    passages_held = {d for r in records for d in r.doc_ids}
    return len(gold & passages_held) / len(gold), len(passages_held)


async def measure(
    backends: Backends, records: list[SearchRecord], questions: list[Question], vectors: Vectors
) -> dict[str, Any]:
    search = backends.stores.search
    began = time.perf_counter()
    matrix = await vectors(records)
    seconds = time.perf_counter() - began
    embedded = [replace(r, vector=v) for r, v in zip(records, matrix, strict=True)]
    await search.upsert(Collection.COMMUNITIES, embedded)
    by_id = {r.id: r for r in records}
    community = CommunitySearch(search, backends.stores.communities, None)
    chosen: list[tuple[float, int]] = []
    dense: list[tuple[float, int]] = []
    ids: list[set[str]] = []
    for q in questions:
        found = await community.context(WORKSPACE, q.text, q.vector, SearchFilter())
        chosen.append(held(q.gold, [by_id[r.id] for r in found.reports]))
        ids.append({r.id for r in found.reports})
        hits = await search.search_vector(
            Collection.COMMUNITIES, WORKSPACE, q.vector, SearchFilter(), DENSE_TOP
        )
        dense.append(held(q.gold, [by_id[h.record.id] for h in hits]))
    return {
        "embed_seconds": round(seconds, 2),
        "chosen_share": round(statistics.fmean(s for s, _ in chosen), 3),
        "chosen_passages": round(statistics.fmean(n for _, n in chosen), 1),
        "dense_share": round(statistics.fmean(s for s, _ in dense), 3),
        "dense_passages": round(statistics.fmean(n for _, n in dense), 1),
        "chosen": ids,
    }


def variants(backends: Backends, embedder: MiniLMEmbedder) -> dict[str, Vectors]:
    cut = MiniLMEmbedder()
    cut._loaded().tokenizer.enable_truncation(max_length=128)
    search = backends.stores.search

    async def members(records: list[SearchRecord]) -> Matrix:
        listed = {
            c.id: sorted(c.members) for c in await backends.stores.communities.list(WORKSPACE)
        }
        rows = []
        for record in records:
            entities = await search.get(Collection.ENTITIES, WORKSPACE, listed[record.id])
            rows.append(np.mean([e.vector for e in entities], axis=0))
        return l2_normalize(np.asarray(rows, dtype=np.float32))

    async def whole(records: list[SearchRecord]) -> Matrix:
        return await embedder.embed([r.text for r in records])

    async def heads(records: list[SearchRecord]) -> Matrix:
        return await embedder.embed([head(r) for r in records])

    async def cut128(records: list[SearchRecord]) -> Matrix:
        return await cut.embed([r.text for r in records])

    async def first128(records: list[SearchRecord]) -> Matrix:
        return await embedder.embed([first_tokens(r.text) for r in records])

    return {
        "whole": whole, "head": heads, "cut128": cut128, "first128": first128, "members": members,
    }  # fmt: skip


async def bench(data: Path, limit: int, data_dir: Path) -> dict[str, Any]:
    beir = load(data, "test")
    settings = load_settings(None, data_dir=data_dir, log_level="WARNING")
    changes = list(itertools.islice(passages(beir.corpus_path), limit or None))
    indexed = {c.doc_id for c in changes}
    embedder = MiniLMEmbedder()
    async with running_indexer(settings) as backends:
        began = time.perf_counter()
        await publish(backends, changes)
        await wait_current(settings, backends)
        out: dict[str, Any] = {
            "passages": len(changes), "index_seconds": round(time.perf_counter() - began, 1),
        }  # fmt: skip
        listed = await backends.stores.communities.list(WORKSPACE)
        ids = [c.id for c in listed if c.report is not None]
        records = await backends.stores.search.get(Collection.COMMUNITIES, WORKSPACE, ids)
        asked = [
            (beir.queries[q], frozenset(gold))
            for q, gold in sorted(beir.qrels.items())
            if set(gold) <= indexed
        ]
        matrix = await embedder.embed([text for text, _ in asked])
        questions = [Question(t, g, v) for (t, g), v in zip(asked, matrix, strict=True)]
        out |= {"reports": len(records), "questions": len(questions)}
        for name, vectors in variants(backends, embedder).items():
            out[name] = await measure(backends, records, questions, vectors)
    await embedder.close()
    base = out["whole"].pop("chosen")
    for name in ("head", "cut128", "first128", "members"):
        pairs = zip(base, out[name].pop("chosen"), strict=True)
        out[name]["chosen_jaccard"] = round(
            statistics.fmean(len(a & b) / len(a | b or {""}) for a, b in pairs), 3
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=0, help="first N passages only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(asyncio.run(bench(args.data, args.limit, Path(tmp))), indent=2))


if __name__ == "__main__":
    main()
