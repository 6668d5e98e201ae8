"""Exact cosine search over the vectors of one (collection, workspace), held in memory.

Rows live in one contiguous float32 matrix (grown by doubling, rows removed by moving the
last row into the hole), so a search is a single matrix-vector product: 100k x 384 takes
a few milliseconds, and exact search needs no index tuning and never misses a hit. Many
searches with a threshold (the near names of a merge batch) share one matrix product that
only picks the rows to score (`search_many`), with the same results as one search each.
Not thread-safe: the owner serializes access.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

from ragstream.common.vectors import l2_normalize

FloatMatrix = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

_PRODUCT_CELLS = 1 << 23
"""Scores held at once by `search_many`'s product (32 MB): queries go in blocks of that
many over the rows."""
_GATHER_FRACTION = 4
"""Filters allowing fewer than 1/4 of the rows score only those rows; wider ones score
every row and mask the rest, which is cheaper than copying most of the matrix."""


class DimensionMismatchError(ValueError):
    """A vector's length differs from the vectors already stored."""


def checked_query(query: FloatMatrix, dim: int | None) -> FloatMatrix:
    """The query normalized; an error when its size is not the index's `dim`."""
    if query.ndim != 1 or query.shape[0] != dim:
        raise DimensionMismatchError(
            f"query vector has shape {query.shape}, the index holds {dim}-d vectors"
        )
    return l2_normalize(query)


class VectorIndex(Protocol):
    """Dense search over the vectors of one (collection, workspace): exact (DenseIndex) or
    approximate (ann.ApproximateIndex)."""

    generation: int
    """The store's change counter this index reflects (see search.py)."""

    def __len__(self) -> int: ...

    def upsert(self, pks: Sequence[int], vectors: FloatMatrix) -> None:
        """Adds or replaces rows; `vectors` must already be normalized."""
        ...

    def remove(self, pks: Sequence[int]) -> None: ...

    def scores(self, query: FloatMatrix, pks: Sequence[int]) -> dict[int, float]:
        """pk -> cosine of those of `pks` that the index holds."""
        ...

    def search(
        self, query: FloatMatrix, allowed: IntArray | None, limit: int, min_score: float
    ) -> list[tuple[int, float]]:
        """(pk, cosine) best first, over `allowed` pks only (None: all rows)."""
        ...

    def search_many(
        self, queries: Sequence[FloatMatrix], allowed: IntArray | None, limit: int, min_score: float
    ) -> list[list[tuple[int, float]]]:
        """`search` of each query, with the same results."""
        ...


def rounding(dim: int) -> float:
    """A margin wider than two float32 computations of the same cosine can differ, summed in
    any order: each is within dim x 2^-24 of the exact product of two unit vectors (the
    standard bound for a dot product), so two are within twice that; the margin, 4 x dim x
    2^-23, is four times that, for the few ulps by which a stored unit vector's length may
    miss 1. At 384 dimensions it is 0.00018: a threshold of 0.9 scores the rows from 0.8998."""
    return 4 * dim * float(np.finfo(np.float32).eps)


_blas_lock = threading.Lock()


def _one_blas_thread() -> None:
    """numpy's BLAS on one thread in this process, from the first product on. Its other
    threads would spin after each product on the cores that the other searches, the merges
    and the model runs use (bench_scale corpus in two processes: 0.6 to 1.1 s more CPU with
    them; `search_many`'s product is the store's only BLAS call). Set once, never around a
    call: changing OpenBLAS's threads while another thread's product runs is not safe."""
    with _blas_lock:
        _limit_blas()


@functools.cache
def _limit_blas() -> None:
    """numpy's own BLAS only (in its package's directory or the wheel's numpy.libs): faiss
    carries another, whose threads its k-means training uses."""
    home = Path(np.__file__).resolve().parent
    places = {home, home.with_name("numpy.libs")}
    controller = ThreadpoolController()
    numpy_blas = [
        info["filepath"]
        for info in controller.info()
        if info["user_api"] == "blas" and Path(info["filepath"]).resolve().parent in places
    ]
    if numpy_blas:
        controller.select(filepath=numpy_blas).limit(limits=1)


def _scores(matrix: FloatMatrix, query: FloatMatrix) -> FloatMatrix:
    """matrix @ query on the calling thread. The product is bound by memory bandwidth, so a
    BLAS spreading it over more threads buys little and its idle threads keep spinning on
    the cores that the other search of a query (BM25, in parallel) is using: a naive Retrieve
    over 100k chunks took 71 ms of CPU with OpenBLAS on 2 threads, 47 ms on one."""
    result: FloatMatrix = np.einsum("ij,j->i", matrix, query)
    return result


def top_k(scores: FloatMatrix, k: int) -> IntArray:
    """Positions of the k highest scores, best first (ties in position order)."""
    if k <= 0 or scores.size == 0:
        return np.empty(0, dtype=np.int64)
    if k < scores.size:
        part = np.argpartition(-scores, k - 1)[:k]
        order = np.lexsort((part, -scores[part]))
        return part[order].astype(np.int64)
    return np.argsort(-scores, kind="stable").astype(np.int64)


class DenseIndex:
    """Vectors keyed by the SQLite primary key of their record."""

    def __init__(self, dim: int | None, pks: IntArray, matrix: FloatMatrix, generation: int):
        """`matrix` (float32) becomes the index's own, not copied: upsert and remove write it."""
        self.dim = dim
        self.generation = generation
        """The store's change counter this index reflects (see search.py)."""
        self._size = len(pks)
        self._pks = np.array(pks, dtype=np.int64)
        self._matrix = np.asarray(matrix, dtype=np.float32).reshape(self._size, dim or 0)
        self._rows: dict[int, int] = {int(pk): row for row, pk in enumerate(self._pks)}

    def __len__(self) -> int:
        return self._size

    def rows(self) -> tuple[IntArray, FloatMatrix]:
        """The pks and their vectors, in the same order (views, valid until a change)."""
        return self._pks[: self._size], self._matrix[: self._size]

    def upsert(self, pks: Sequence[int], vectors: FloatMatrix) -> None:
        """Adds or replaces rows; `vectors` must already be normalized."""
        if not pks:
            return
        if self.dim is None:  # empty: the first vectors fix the size
            self.dim = int(vectors.shape[1])
            self._pks = np.zeros(0, dtype=np.int64)
            self._matrix = np.zeros((0, self.dim), dtype=np.float32)
        if vectors.shape[1] != self.dim:
            raise DimensionMismatchError(f"vector size {vectors.shape[1]}, index has {self.dim}")
        for pk, vector in zip(pks, vectors, strict=True):
            row = self._rows.get(pk)
            if row is None:
                row = self._append_row()
                self._rows[pk] = row
                self._pks[row] = pk
            self._matrix[row] = vector

    def _append_row(self) -> int:
        if self._size == len(self._pks):
            capacity = max(1024, 2 * self._size)
            self._pks = np.resize(self._pks, capacity)
            grown = np.zeros((capacity, self.dim or 0), dtype=np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown
        self._size += 1
        return self._size - 1

    def remove(self, pks: Sequence[int]) -> None:
        for pk in pks:
            row = self._rows.pop(pk, None)
            if row is None:
                continue
            last = self._size - 1
            if row != last:
                moved = int(self._pks[last])
                self._pks[row] = moved
                self._matrix[row] = self._matrix[last]
                self._rows[moved] = row
            self._size = last
        if self._size == 0:
            self.dim = None  # as the store does: an emptied index accepts any size again

    def scores(self, query: FloatMatrix, pks: Sequence[int]) -> dict[int, float]:
        """pk -> cosine of those of `pks` that the index holds."""
        rows = [(pk, row) for pk in pks if (row := self._rows.get(pk)) is not None]
        if not rows:
            return {}
        q = checked_query(query, self.dim)
        found = _scores(self._matrix[[row for _, row in rows]], q)
        return {pk: float(score) for (pk, _), score in zip(rows, found, strict=True)}

    def search(
        self, query: FloatMatrix, allowed: IntArray | None, limit: int, min_score: float
    ) -> list[tuple[int, float]]:
        """(pk, cosine) best first, over `allowed` pks only (None: all rows)."""
        if self._size == 0 or limit <= 0:
            return []
        q = checked_query(query, self.dim)
        pks = self._pks[: self._size]
        matrix = self._matrix[: self._size]
        rows, mask = self._restriction(allowed)
        if rows is not None:
            if not len(rows):
                return []
            pks, scores = pks[rows], _scores(matrix[rows], q)
        elif mask is not None:
            scores = np.where(mask, _scores(matrix, q), -np.inf).astype(np.float32)
        else:
            scores = _scores(matrix, q)
        return self._ranked(pks, scores, limit, min_score)

    def search_many(
        self, queries: Sequence[FloatMatrix], allowed: IntArray | None, limit: int, min_score: float
    ) -> list[list[tuple[int, float]]]:
        """`search` of each query, with the same results. With a threshold (near names: 0.9)
        one matrix product for a block of queries, whose rounding may differ from `search`'s,
        finds the rows within `rounding` of the threshold; only those are scored as `search`
        scores them (one row's score does not depend on the rows scored with it), so the
        rows kept and their scores are `search`'s to the bit. 256 names over 33,000 take an
        eighth of the CPU of 256 searches, over 2,000 a quarter (bench_search_many.py)."""
        if min_score <= -1.0 or len(queries) < 2 or self._size == 0 or limit <= 0:
            return [self.search(query, allowed, limit, min_score) for query in queries]
        _one_blas_thread()
        block = np.stack([checked_query(query, self.dim) for query in queries])
        pks = self._pks[: self._size]
        matrix = self._matrix[: self._size]
        rows, mask = self._restriction(allowed)
        candidates = matrix if rows is None else matrix[rows]
        floor = min_score - rounding(self.dim or 0)
        step = max(1, _PRODUCT_CELLS // max(1, len(candidates)))
        found: list[list[tuple[int, float]]] = []
        for start in range(0, len(block), step):
            part = block[start : start + step]
            rough = part @ candidates.T
            for q, row_scores in zip(part, rough, strict=True):
                near = np.flatnonzero(row_scores >= floor)
                if mask is not None:
                    near = near[mask[near]]
                if rows is not None:
                    near = rows[near]
                found.append(self._ranked(pks[near], _scores(matrix[near], q), limit, min_score))
        return found

    def _restriction(
        self, allowed: IntArray | None
    ) -> tuple[IntArray | None, npt.NDArray[np.bool_] | None]:
        """How `allowed` restricts the rows: (the rows to gather, None) for a narrow filter
        (`_GATHER_FRACTION`), (None, a mask over every row) for a wide one, (None, None) for
        none."""
        if allowed is None:
            return None, None
        mask = np.isin(self._pks[: self._size], allowed)
        if int(mask.sum()) * _GATHER_FRACTION < self._size:
            return np.flatnonzero(mask), None
        return None, mask

    def _ranked(
        self, pks: IntArray, scores: FloatMatrix, limit: int, min_score: float
    ) -> list[tuple[int, float]]:
        """The best `limit` of the scored rows at `min_score` or more, best first."""
        if min_score > -1.0:  # a threshold (near names: 0.9) leaves few rows to rank
            above = np.flatnonzero(scores >= min_score)
            pks, scores = pks[above], scores[above]
        best = top_k(scores, limit)
        chosen = scores[best]
        kept = np.isfinite(chosen) & (chosen >= min_score)
        # tolist(): Python ints and floats in one call, not a numpy scalar per hit.
        hits = list(zip(pks[best[kept]].tolist(), chosen[kept].tolist(), strict=True))
        # A zero row (a text the embedder does not serve) has no direction: never a hit, as on
        # Elasticsearch, which keeps such vectors out of its kNN graph. Only it scores exactly 0.
        return [(pk, s) for pk, s in hits if s != 0.0 or np.any(self._matrix[self._rows[pk]])]
