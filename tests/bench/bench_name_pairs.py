"""Near-duplicate entity names on a kept index: pairs whose name vectors are close, counted.

Every entity name of the index is embedded with the offline MiniLM model and every pair at
cosine `--threshold` (0.9) or more is counted, whatever the two types. Run on demand over
an index `ragstream eval multihop --index-dir DIR` kept:

    .venv/bin/python -m tests.bench.bench_name_pairs DIR [DIR ...] [--sample 50 --seed 7]

Printed per index: entities, pairs, the pairs the LLM check would put to an LLM with the
default settings (`check_pairs`: types compatible, neither name with `check_neighbours` or
more others at the threshold), and a seeded sample of the pairs (names, types, cosine, and
whether the check would ask it) to judge by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np

from ragstream.common.config_resolution import ResolutionConfig
from ragstream.common.providers.minilm import MiniLMEmbedder
from ragstream.indexer.resolution.names import compatible

BLOCK = 2048


def entity_names(index_dir: Path) -> list[tuple[str, str]]:
    conn = sqlite3.connect(f"file:{index_dir / 'ragstream.db'}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT d.attrs FROM search_entities AS r JOIN search_entities_data AS d ON d.pk = r.pk"
    ).fetchall()
    named = [json.loads(attrs) for (attrs,) in rows]
    return sorted((str(e.get("name", "")), str(e.get("type", ""))) for e in named)


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
