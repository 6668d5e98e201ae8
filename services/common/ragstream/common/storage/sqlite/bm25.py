"""Exact BM25 top-k with MaxScore pruning, so a common query term never scores every record.

Scores are those of SQLite FTS5's bm25(), which the store used before: k1 = 1.2, b = 0.75,
idf = ln((N - n + 0.5) / (n + 0.5)) and 1e-6 where that is not positive, N and the average
length over the whole collection. A term adds idf * tf (k1 + 1) / (tf + k1 (1 - b + b D/avgD)).

MaxScore (Turtle and Flood, "Query evaluation: strategies and optimizations", 1995): a term
adds at most ub (its weight at its highest tf in its shortest record) to any record. Terms
are read highest ub first, every posting of each; once `limit` candidates score at least
theta and the terms not read yet could add less than theta together, no record outside the
candidates can reach the top, so the remaining (common) terms are looked up only for the
candidates that can still get there. The result is the exact top, not an approximation:
only work that cannot change it is skipped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

K1 = 1.2
B = 0.75
MIN_IDF = 1e-6
"""FTS5's floor for terms in half of the records or more: they still count, barely."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Corpus:
    """Collection-wide statistics: every record of every workspace, as FTS5 counted them."""

    records: int
    tokens: int

    @property
    def average_length(self) -> float:
        return self.tokens / self.records if self.records else 0.0


@dataclass(frozen=True, slots=True)
class TermStats:
    term: str
    df: int
    """Records holding the term, in the whole collection."""
    max_tf: int
    """At least the term's highest frequency in one record."""
    min_length: int
    """At most the length of the shortest record holding the term."""


@dataclass(frozen=True, slots=True)
class Postings:
    """Records holding one term: pk, term frequency and record length, in pk order."""

    pks: IntArray
    tf: FloatArray
    length: FloatArray


class PostingSource(Protocol):
    def postings(self, term: str) -> Postings:
        """Every record holding `term` that the search may return (workspace and filter)."""
        ...

    def frequencies(self, term: str, pks: IntArray) -> tuple[IntArray, FloatArray]:
        """(pk, tf) of those of `pks` that hold `term`."""
        ...


def idf(df: int, corpus: Corpus) -> float:
    value = math.log((corpus.records - df + 0.5) / (df + 0.5))
    return value if value > 0 else MIN_IDF


def _weights(term_idf: float, tf: FloatArray, length: FloatArray, avgdl: float) -> FloatArray:
    result: FloatArray = term_idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * length / avgdl))
    return result


def _bound(term_idf: float, stats: TermStats, avgdl: float) -> float:
    """The most the term adds to one record: the weight grows with tf, shrinks with length."""
    tf, length = float(stats.max_tf), float(stats.min_length)
    return term_idf * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * length / avgdl))


@dataclass(slots=True)
class _Candidates:
    pks: IntArray
    scores: FloatArray
    length: FloatArray

    def add(self, postings: Postings, weights: FloatArray) -> None:
        """Merges in a term's postings (their weights are added to the scores)."""
        pks = np.concatenate((self.pks, postings.pks))
        unique, inverse = np.unique(pks, return_inverse=True)
        weighted = np.concatenate((self.scores, weights))
        self.scores = np.bincount(inverse, weights=weighted, minlength=len(unique)).astype(
            np.float64, copy=False
        )
        length = np.zeros(len(unique), dtype=np.float64)
        length[inverse] = np.concatenate((self.length, postings.length))
        self.pks, self.length = unique, length

    def keep(self, mask: npt.NDArray[np.bool_]) -> None:
        self.pks, self.scores, self.length = self.pks[mask], self.scores[mask], self.length[mask]


def kth_best(scores: FloatArray, k: int) -> float:
    """The k-th highest score (-inf when there are fewer than k)."""
    if k <= 0 or len(scores) < k:
        return -math.inf
    return float(-np.partition(-scores, k - 1)[k - 1])


def top(
    terms: Sequence[TermStats], corpus: Corpus, source: PostingSource, limit: int
) -> list[tuple[int, float]]:
    """(pk, score) best first of every record scoring at least the `limit`-th best score
    (so ties at the cut are all there for the caller to break)."""
    avgdl = corpus.average_length
    if limit <= 0 or avgdl <= 0:
        return []
    weighted = [(idf(t.df, corpus), t) for t in terms if t.df > 0]
    # Highest bound first; the term breaks ties so that the summation order is always the same.
    order = sorted(
        ((w, t.term, _bound(w, t, avgdl)) for w, t in weighted), key=lambda o: (-o[2], o[1])
    )
    rest = [math.fsum(bound for *_, bound in order[i:]) for i in range(len(order) + 1)]
    found = _Candidates(np.empty(0, np.int64), np.empty(0), np.empty(0))
    theta, read = -math.inf, 0
    while read < len(order) and not rest[read] < theta:
        term_idf, term, _ = order[read]
        postings = source.postings(term)
        found.add(postings, _weights(term_idf, postings.tf, postings.length, avgdl))
        read += 1
        theta = kth_best(found.scores, limit)
    for i in range(read, len(order)):
        found.keep(found.scores + rest[i] >= theta)
        term_idf, term, _ = order[i]
        pks, tf = source.frequencies(term, found.pks)
        rows = np.searchsorted(found.pks, pks)
        found.scores[rows] += _weights(term_idf, tf, found.length[rows], avgdl)
        theta = max(theta, kth_best(found.scores, limit))
    cut = kth_best(found.scores, limit)
    chosen = np.flatnonzero(found.scores >= cut)
    chosen = chosen[np.argsort(-found.scores[chosen], kind="stable")]
    return list(zip(found.pks[chosen].tolist(), found.scores[chosen].tolist(), strict=True))
