"""Near-duplicate entity names on a kept index: pairs whose name vectors are close, counted.

Every entity name of the index is embedded with the offline MiniLM model and every pair at
cosine `--threshold` (0.9) or more is counted, whatever the two types. Run on demand over
an index `ragstream eval multihop --index-dir DIR` kept:

    .venv/bin/python -m tests.bench.bench_name_pairs DIR [DIR ...] [--sample 50 --seed 7]

Printed per index: entities, pairs, the pairs the LLM check would put to an LLM with the
default settings (`check_pairs`: types compatible, neither name with `check_neighbours` or
more others at the threshold), the pairs counted by how their names differ
(`how_they_differ`), and a seeded sample of the pairs (names, types, cosine, and whether the
check would ask it) to judge by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np

from ragstream.common.config_resolution import ResolutionConfig
from ragstream.common.providers.minilm import MiniLMEmbedder
from ragstream.common.text.fold import fold
from ragstream.indexer.resolution.names import compatible

BLOCK = 2048


def entity_names(index_dir: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{index_dir / 'ragstream.db'}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT d.attrs FROM search_entities AS r JOIN search_entities_data AS d ON d.pk = r.pk"
    ).fetchall()
    named = [json.loads(attrs) for (attrs,) in rows]
    return sorted((str(e.get("name", "")), str(e.get("type", ""))) for e in named)


_NUMBER = re.compile(r"[ivxl]+|\d+(?:st|nd|rd|th)?")
"""A folded regnal, sequel or ordinal number: "ii", "3", "41st"."""


def how_they_differ(a: str, b: str) -> str:
    """How two near names differ, by their folded words, so that the pairs left can be read
    by kind: "article" ("The Predator" / "Predator"), "number added" ("Albert I" /
    "Albert"), "generation" ("Ernie Reyes Jr" / "Ernie Reyes"), "another number" ("Route
    26" / "Route 28"), "plural" ("Butlers" / "Butler"), "ending" ("Ancient Egyptian" /
    "Ancient Egypt"), "one word" ("Manuel Pérez de Guzmán" / "Pedro Pérez de Guzmán"),
    "contained" (one's words all in the other's: "South Korea" / "Korea"), "other"."""
    short, long_ = sorted((fold(a).split(), fold(b).split()), key=len)
    if long_[1:] == short and long_[0] in ("the", "a", "an"):
        return "article"
    if long_[:-1] == short and long_[-1] in ("jr", "sr"):
        return "generation"
    if long_[:-1] == short and _NUMBER.fullmatch(long_[-1]):
        return "number added"
    differ = [(x, y) for x, y in zip(short, long_, strict=False) if x != y]
    if len(short) == len(long_) and len(differ) == 1:
        return _one_word_apart(*differ[0])
    return "contained" if set(short) <= set(long_) else "other"


def _one_word_apart(x: str, y: str) -> str:
    if _NUMBER.fullmatch(x) or _NUMBER.fullmatch(y):
        return "another number"
    if {f"{x}s", f"{x}es"} & {y} or {f"{y}s", f"{y}es"} & {x}:
        return "plural"
    return "ending" if x.startswith(y) or y.startswith(x) else "one word"


def close_pairs(vectors: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """Every pair i < j whose (unit) vectors have cosine `threshold` or more."""
    found: list[tuple[int, int, float]] = []
    for start in range(0, len(vectors), BLOCK):
        scores = vectors[start : start + BLOCK] @ vectors.T
        rows, cols = np.nonzero(scores >= threshold)
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
            if start + i < j:
                found.append((start + i, j, float(scores[i, j])))
    return found


async def report(index_dir: Path, threshold: float, sample: int, seed: int) -> dict[str, object]:
    names = entity_names(index_dir)
    embedder = MiniLMEmbedder()
    try:
        vectors = await embedder.embed([name for name, _ in names])
    finally:
        await embedder.close()
    pairs = close_pairs(np.asarray(vectors, dtype=np.float32), threshold)
    chosen = random.Random(seed).sample(pairs, min(sample, len(pairs)))
    neighbours = Counter(k for i, j, _ in pairs for k in (i, j))
    hub = ResolutionConfig().check_neighbours

    def asked(i: int, j: int) -> bool:
        both = neighbours[i] < hub and neighbours[j] < hub
        return both and compatible(names[i][1], names[j][1])

    return {
        "index": str(index_dir),
        "entities": len(names),
        "threshold": threshold,
        "pairs": len(pairs),
        "same_type_pairs": sum(names[i][1] == names[j][1] for i, j, _ in pairs),
        "check_pairs": sum(asked(i, j) for i, j, _ in pairs),
        "differences": dict(
            Counter(how_they_differ(names[i][0], names[j][0]) for i, j, _ in pairs).most_common()
        ),
        "sample": [
            [names[i][0], names[i][1], names[j][0], names[j][1], round(score, 3), asked(i, j)]
            for i, j, score in sorted(chosen)
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index_dirs", nargs="+", type=Path)
    parser.add_argument("--threshold", type=float, default=0.9)
    parser.add_argument("--sample", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    for index_dir in args.index_dirs:
        found = asyncio.run(report(index_dir, args.threshold, args.sample, args.seed))
        print(json.dumps(found, ensure_ascii=False))


if __name__ == "__main__":
    main()
