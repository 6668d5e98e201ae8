"""Dense search of the embedded store: the exact matrix against the approximate index.

Per size: build time, search latency p50/p95 (unfiltered, and filtered to a tenth of the
rows), recall@50 against exact search, and the memory each holds. Vectors: 384-d around
topic centres (the hard case: every vector is its centre plus as much noise), and, with
`--real DIR`, the MiniLM vectors of a kept index (`ragstream eval multihop --index-dir DIR`),
each held-out vector a query. On demand, never a timed test:

    .venv/bin/python -m tests.bench.bench_dense_index [--sizes 100000 1000000] [--real DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import sqlite3
import time
from pathlib import Path
from typing import Any

import numpy as np

from ragstream.common.storage.sqlite import ann
from ragstream.common.storage.sqlite.ann import ApproximateIndex
from ragstream.common.storage.sqlite.dense import DenseIndex

DIM = 384
QUERIES = 200
K = 50


def topical(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(count // 500, 1), DIM)).astype(np.float32)
    rows = np.empty((count, DIM), dtype=np.float32)
    for start in range(0, count, 100_000):
        stop = min(start + 100_000, count)
        part = centres[rng.integers(0, len(centres), stop - start)]
        rows[start:stop] = part + 0.7 * rng.standard_normal((stop - start, DIM))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def real_vectors(
    index_dir: Path, tables: tuple[str, ...] = ("chunks", "entities", "relations", "communities")
) -> np.ndarray:
    """The non-zero vectors of a kept index's collections, unit length."""
    conn = sqlite3.connect(f"file:{index_dir / 'ragstream.db'}?mode=ro", uri=True)
    blobs = [
        blob
        for table in tables
        for (blob,) in conn.execute(f"SELECT vector FROM search_{table}_vectors")
    ]
    rows = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)
    rows = rows[np.linalg.norm(rows, axis=1) > 0]
    unit: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


def timed(
    search: Any, queries: np.ndarray, allowed: np.ndarray | None
) -> tuple[list[Any], float, float]:
    results, times = [], []
    for query in queries:
        began = time.perf_counter()
        results.append([pk for pk, _ in search(query, allowed, K, -1.0)])
        times.append((time.perf_counter() - began) * 1000)
    return results, float(np.percentile(times, 50)), float(np.percentile(times, 95))


def measure(name: str, matrix: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    pks = np.arange(len(matrix), dtype=np.int64)
    allowed = pks[::10]
    exact = DenseIndex(matrix.shape[1], pks, matrix, 0)
    began = time.perf_counter()
    approximate = ApproximateIndex.build(matrix.shape[1], pks, matrix)
    build_s = time.perf_counter() - began
    report: dict[str, Any] = {"vectors": name, "size": len(matrix), "build_s": round(build_s, 1)}
    for label, restriction in (("all", None), ("tenth", allowed)):
        want, e50, e95 = timed(exact.search, queries, restriction)
        got, a50, a95 = timed(approximate.search, queries, restriction)
        recall = np.mean(
            [len(set(g) & set(w)) / max(len(w), 1) for g, w in zip(got, want, strict=True)]
        )
        report[label] = {
            "exact_ms_p50_p95": [round(e50, 2), round(e95, 2)],
            "approximate_ms_p50_p95": [round(a50, 2), round(a95, 2)],
            "recall@50": round(float(recall), 4),
        }
    report["exact_mb"] = round(matrix.nbytes / 1e6)
    report["approximate_mb"] = round(len(matrix) * matrix.shape[1] * 2 / 1e6)
    report["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    report["probes"] = ann.PROBES
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--real", type=Path, default=None, help="a kept index directory")
    args = parser.parse_args()
    if args.real is not None:
        rows = real_vectors(args.real)
        held = np.random.default_rng(1).choice(len(rows), QUERIES, replace=False)
        base = np.delete(rows, held, axis=0)
        print(json.dumps(measure(f"minilm:{args.real.name}", base, rows[held])))
    for size in args.sizes:
        print(json.dumps(measure("topical", topical(size, 0), topical(QUERIES, 1))))


if __name__ == "__main__":
    main()
