"""Approximate dense search for large collections: an inverted-file index (faiss IVF) over
fp16 vectors, keyed by the SQLite primary key of each record.

The vectors are clustered into LISTS_PER_ROOT * sqrt(n) lists by k-means on a seeded sample;
a search scores the vectors of the PROBES lists nearest the query. Filters run inside the
search (an id selector), and a filter the probed lists cannot fill falls back to scoring
every allowed vector, so a filtered search never returns fewer results than exist. fp16
storage halves the memory of the exact matrix; scores are the fp16 vectors' cosines (within
about 1e-3 of the float32 ones). Why IVF, and the recall it reaches on MiniLM vectors:
README, "Approximate vector search"; figures in tests/bench/bench_dense_index.py.
Not thread-safe: the owner serializes access.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from ragstream.common.storage.sqlite.dense import checked_query

FloatMatrix = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]

LISTS_PER_ROOT = 4
"""Inverted lists per square root of the vectors at training (faiss's guideline, 4-16)."""
PROBES = 480
"""Lists scored per search. The recall of a fixed number of probes holds as the lists grow
with the collection. On 29k MiniLM vectors of musique_hipporag_100, recall@50 against exact
search is 0.981 at 64 probes and 0.991 at 128 (686 lists or 1,372 alike); the hashed vectors
of tests/bench/bench_search_stores.py are harder: at 1M (4,000 lists) 0.964 at 160 probes,
0.983 at 320 and 0.990 at 480, for 3.2, 4.7 and 6.7 ms a search."""
TRAINING_PER_LIST = 64
"""k-means sample: this many vectors per list at most (faiss warns below 39)."""
RETRAIN_GROWTH = 4
"""An index that has grown to this many times its training size is built again (its lists
have grown long and their centroids stale)."""
SEED = 1234


class ApproximateIndex:
    """IVF over fp16 vectors; pks that a zero vector stands for are kept apart (they never
    match, as on Elasticsearch, which keeps such vectors out of its kNN graph)."""

    def __init__(self, index: faiss.Index, pks: set[int], zeros: set[int], trained: int):
        self.generation = 0
        """The store's change counter this index reflects (see search.py)."""
        self._lists = int(faiss.extract_index_ivf(index).nlist)
        self._index = index
        self._pks = pks
        self._zeros = zeros
        self.trained = trained
        """How many vectors the lists were trained for."""

    @classmethod
    def build(cls, dim: int, pks: IntArray, matrix: FloatMatrix) -> ApproximateIndex:
        """Trained on a seeded sample of `matrix` (normalized rows), holding all of it."""
        nonzero = np.flatnonzero(np.any(matrix != 0, axis=1))
        index = cls.empty(dim, matrix[training_sample(nonzero)], len(nonzero))
        index.upsert([int(pk) for pk in pks], matrix)
        return index

    @classmethod
    def empty(cls, dim: int, sample: FloatMatrix, total: int) -> ApproximateIndex:
        """An empty index whose lists are trained on `sample` (nonzero normalized rows,
        `training_sample` of `total`) for `total` vectors."""
        if not len(sample):  # only zero vectors: any one direction will do
            sample = np.eye(1, dim, dtype=np.float32)
        lists = min(lists_for(total), len(sample))  # k-means needs a point per list
        index = faiss.index_factory(dim, f"IVF{lists},SQfp16", faiss.METRIC_INNER_PRODUCT)
        ivf = faiss.extract_index_ivf(index)
        ivf.cp.seed = SEED
        ivf.cp.min_points_per_centroid = 1  # small collections (tests) train without a warning
        index.train(sample)
        ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # type: ignore[attr-defined]
        return cls(index, set(), set(), total)

    @classmethod
    def read(cls, path: Path) -> ApproximateIndex:
        """An index written by `write` (the faiss file and its `.npz` of keys beside it)."""
        index = faiss.read_index(str(path))
        with np.load(path.with_suffix(".npz")) as keys:
            pks, zeros, trained = keys["pks"], keys["zeros"], int(keys["trained"])
        return cls(index, set(pks.tolist()), set(zeros.tolist()), trained)

    def write(self, path: Path) -> None:
        """The index to `path` and its keys to `path` with suffix `.npz`."""
        faiss.write_index(self._index, str(path))
        np.savez(
            path.with_suffix(".npz"),
            pks=np.fromiter(self._pks, dtype=np.int64, count=len(self._pks)),
            zeros=np.fromiter(self._zeros, dtype=np.int64, count=len(self._zeros)),
            trained=np.int64(self.trained),
        )

    def __len__(self) -> int:
        return len(self._pks) + len(self._zeros)

    @property
    def dim(self) -> int:
        return int(self._index.d)

    @property
    def stale(self) -> bool:
        """True when the index has outgrown its lists (RETRAIN_GROWTH)."""
        return len(self._pks) > RETRAIN_GROWTH * max(self.trained, 1)

    def upsert(self, pks: Sequence[int], vectors: FloatMatrix) -> None:
        """Adds or replaces vectors (normalized rows)."""
        if not pks:
            return
        self.remove(pks)
        keys = np.asarray(pks, dtype=np.int64)
        live = np.any(vectors != 0, axis=1)
        self._zeros.update(int(pk) for pk in keys[~live])
        if live.any():
            self._index.add_with_ids(np.ascontiguousarray(vectors[live]), keys[live])
            self._pks.update(int(pk) for pk in keys[live])

    def remove(self, pks: Sequence[int]) -> None:
        present = [pk for pk in pks if pk in self._pks]
        for pk in pks:
            self._zeros.discard(pk)
        if present:
            self._index.remove_ids(faiss.IDSelectorArray(np.asarray(present, dtype=np.int64)))
            self._pks.difference_update(present)

    def scores(self, query: FloatMatrix, pks: Sequence[int]) -> dict[int, float]:
        """pk -> cosine of those of `pks` that the index holds."""
        found = self._exact(checked_query(query, self.dim), [pk for pk in pks if pk in self._pks])
        return {**{pk: 0.0 for pk in pks if pk in self._zeros}, **dict(found)}

    def search(
        self, query: FloatMatrix, allowed: IntArray | None, limit: int, min_score: float
    ) -> list[tuple[int, float]]:
        """(pk, cosine) best first, over `allowed` pks only (None: all)."""
        if not self._pks or limit <= 0:
            return []
        q = checked_query(query, self.dim)
        if allowed is None:
            hits = self._probed(q, limit, None, 1.0)
        else:
            present = [pk for pk in allowed.tolist() if pk in self._pks]
            wanted = min(limit, len(present))
            share = len(present) / len(self._pks)
            hits = self._probed(q, limit, allowed, share) if len(present) > limit else []
            if len(hits) < wanted:  # the probed lists held too few allowed vectors
                hits = sorted(self._exact(q, present), key=lambda h: (-h[1], h[0]))[:limit]
        return [(pk, score) for pk, score in hits if score >= min_score]

    def search_many(
        self, queries: Sequence[FloatMatrix], allowed: IntArray | None, limit: int, min_score: float
    ) -> list[list[tuple[int, float]]]:
        return [self.search(query, allowed, limit, min_score) for query in queries]

    def _probed(
        self, q: FloatMatrix, limit: int, allowed: IntArray | None, share: float
    ) -> list[tuple[int, float]]:
        """The probed lists' best; a filter allowing `share` of the vectors probes 1/share
        as many lists, so that as many allowed vectors are scored as without a filter."""
        selector = None if allowed is None else faiss.IDSelectorBatch(allowed)
        params = faiss.SearchParametersIVF()
        params.nprobe = min(self._lists, math.ceil(PROBES / max(share, 1e-9)))
        params.sel = selector
        scores, pks = self._index.search(q[None, :], limit, params=params)
        return [(int(pk), float(s)) for pk, s in zip(pks[0], scores[0], strict=True) if pk >= 0]

    def _exact(self, q: FloatMatrix, pks: list[int]) -> list[tuple[int, float]]:
        if not pks:
            return []
        vectors = self._index.reconstruct_batch(np.asarray(pks, dtype=np.int64))
        found = vectors @ q
        return [(pk, float(s)) for pk, s in zip(pks, found, strict=True)]


def lists_for(total: int) -> int:
    """Inverted lists for `total` vectors: LISTS_PER_ROOT * sqrt(total), at least one."""
    return max(1, min(total, int(LISTS_PER_ROOT * math.sqrt(total))))


def training_sample(candidates: IntArray) -> IntArray:
    """The seeded sample, ascending, of `candidates` (positions or pks of nonzero vectors)
    that trains the lists for that many vectors."""
    size = min(len(candidates), TRAINING_PER_LIST * lists_for(len(candidates)))
    chosen = np.random.default_rng(SEED).choice(candidates, size, replace=False)
    return np.sort(chosen).astype(np.int64)
