"""Many thresholded searches at once (a merge batch's near names): one by one, or shared.

A page of 256 queries at cosine 0.9 over the exact index, as `NameIndex` sends them: each by
`DenseIndex.search`, or all by `DenseIndex.search_many` (one matrix product picks the rows
to score). Per size, in turn for `--rounds` rounds: the CPU milliseconds of each way (this
thread's), and whether the results are identical. Sizes: 2,000 (the names of the corpus
bench's 100 documents) and 33,000 (2Wiki's). Vectors: 384-d around topic centres, the
queries rows plus a little noise (so each has near rows), or, with `--real DIR`, the name
vectors of a kept index (`ragstream eval multihop --index-dir DIR`), 256 of them the
queries. On demand, never a timed test:

    .venv/bin/python -m tests.bench.bench_search_many [--sizes 2000 33000] [--real DIR]

On the 2-core machine (2026-12-07, three rounds, CPU ms): 2,000 topical rows 38.7, 37.6,
37.5 one by one against 11.5, 8.3, 8.4 shared; 33,000 rows 598, 587, 654 against 76, 75, 72;
identical results every round. The one matrix product runs on one BLAS thread (dense.py).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragstream.common.storage.sqlite.dense import DenseIndex
from tests.bench.bench_dense_index import real_vectors, topical

PAGE = 256
THRESHOLD = 0.9
LIMIT = 20


def cpu_ms(run: Any) -> tuple[Any, float]:
    began = time.thread_time()
    result = run()
    return result, (time.thread_time() - began) * 1000


def measure(name: str, matrix: np.ndarray, queries: np.ndarray, rounds: int) -> dict[str, Any]:
    index = DenseIndex(matrix.shape[1], np.arange(len(matrix), dtype=np.int64), matrix, 0)
    listed = list(queries)
    each, shared, same = [], [], []
    for _ in range(rounds):
        one_by_one, a = cpu_ms(lambda: [index.search(q, None, LIMIT, THRESHOLD) for q in listed])
        together, b = cpu_ms(lambda: index.search_many(listed, None, LIMIT, THRESHOLD))
        each.append(round(a, 1))
        shared.append(round(b, 1))
        same.append(one_by_one == together)
    hits = sum(len(found) for found in together)
    return {
        "vectors": name, "size": len(matrix), "queries": len(listed), "hits": hits,
        "one_by_one_ms": each, "search_many_ms": shared, "identical": all(same),
    }  # fmt: skip


def near_queries(matrix: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    picked = matrix[rng.choice(len(matrix), PAGE, replace=False)]
    noisy = picked + 0.02 * rng.standard_normal(picked.shape).astype(np.float32)
    unit: np.ndarray = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    return unit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 33_000])
    parser.add_argument("--real", type=Path, default=None, help="a kept index directory")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if args.real is not None:
        rows = real_vectors(args.real, ("names",))
        picked = rows[np.random.default_rng(1).choice(len(rows), PAGE, replace=False)]
        print(json.dumps(measure(f"names:{args.real.name}", rows, picked, args.rounds)))
    for size in args.sizes:
        rows = topical(size, 0)
        print(json.dumps(measure("topical", rows, near_queries(rows, 1), args.rounds)))


if __name__ == "__main__":
    main()
