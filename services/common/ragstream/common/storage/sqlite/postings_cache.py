"""Decoded BM25 postings of the terms searched lately, per (collection, workspace).

Reading a term's postings row by row out of SQLite costs about a microsecond a posting, so a
common term (tens of thousands of records) costs tens of milliseconds on every query that
reads it. The cache keeps them as arrays, least recently used first out, within a total
number of postings.

The cache of a (collection, workspace) holds the postings of one generation of the store
(`generations.GenerationalCache`): this instance's writes drop only the terms they change,
so a workspace being indexed keeps its other terms cached. Unfiltered searches only: a
filtered search's postings are read with its filter inside the SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragstream.common.storage.sqlite import bm25
from ragstream.common.storage.sqlite.generations import GenerationalCache

MAX_POSTINGS = 6_000_000
"""Postings kept per store in all (16 bytes each: under 100 MB)."""
FULL_READ_RATIO = 1
"""A term's frequencies in the candidates are read with all its postings (and cached) when
it has at most this many postings per candidate: the range scan then reads no more rows
than the lookups would, each cheaper. A term in most records of a large collection is
looked up, as reading its hundreds of thousands of postings would cost more."""


class PostingsCache:
    """Thread-safe; shared by the reader threads of one store."""

    def __init__(self, max_postings: int = MAX_POSTINGS) -> None:
        self._cache: GenerationalCache[str, _Compact] = GenerationalCache(
            max_postings, lambda postings: len(postings.pks)
        )

    def source(
        self, key: object, generation: int, sql: bm25.PostingSource, df: Mapping[str, int]
    ) -> bm25.PostingSource:
        """`sql` (a read at `generation`) with this cache in front of it; `df` holds the
        collection's record counts of the query's terms (at least their postings here)."""
        if not self._cache.admit(key, generation):
            return sql  # an older snapshot than the cache: the cache may be ahead of it
        return _Cached(self, key, generation, sql, df)

    def changed(self, key: object, generation: int, terms: Iterable[str]) -> None:
        """A write of this instance moved `key` to `generation`, changing `terms` only."""
        self._cache.changed(key, generation, terms)

    def forget(self, key: object) -> None:
        """Drops everything of `key` (a write that did not commit)."""
        self._cache.forget(key)

    def get(self, key: object, generation: int, term: str) -> bm25.Postings | None:
        found = self._cache.get(key, generation, term)
        if found is None:
            return None
        return bm25.Postings(
            found.pks, found.tf.astype(np.float64), found.length.astype(np.float64)
        )

    def put(self, key: object, generation: int, term: str, postings: bm25.Postings) -> None:
        self._cache.put(key, generation, {term: _Compact.of(postings)})


@dataclass(frozen=True, slots=True)
class _Compact:
    """Postings as kept: tf and length are integers below 2**24, exact in float32."""

    pks: bm25.IntArray
    tf: npt.NDArray[np.float32]
    length: npt.NDArray[np.float32]

    @classmethod
    def of(cls, postings: bm25.Postings) -> _Compact:
        pks = postings.pks.copy()
        pks.flags.writeable = False  # shared by every search that reads the term
        return cls(pks, postings.tf.astype(np.float32), postings.length.astype(np.float32))


class _Cached:
    """bm25.PostingSource: cached postings where there are, SQL for the rest."""

    def __init__(
        self,
        cache: PostingsCache,
        key: object,
        generation: int,
        sql: bm25.PostingSource,
        df: Mapping[str, int],
    ) -> None:
        self._df = df
        self._cache = cache
        self._key = key
        self._generation = generation
        self._sql = sql

    def postings(self, term: str) -> bm25.Postings:
        found = self._cache.get(self._key, self._generation, term)
        if found is None:
            found = self._sql.postings(term)
            self._cache.put(self._key, self._generation, term, found)
        return found

    def frequencies(self, term: str, pks: bm25.IntArray) -> tuple[bm25.IntArray, bm25.FloatArray]:
        found = self._cache.get(self._key, self._generation, term)
        if found is None and self._df.get(term, 0) > FULL_READ_RATIO * len(pks):
            return self._sql.frequencies(term, pks)
        if found is None:
            found = self.postings(term)
        rows = np.searchsorted(found.pks, pks)
        rows[rows >= len(found.pks)] = 0
        hit = found.pks[rows] == pks if len(found.pks) else np.zeros(len(pks), dtype=bool)
        return pks[hit], found.tf[rows[hit]]
