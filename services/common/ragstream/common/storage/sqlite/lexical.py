"""SQL of the embedded store's BM25 index: postings, document frequencies, corpus totals.

Per collection `<c>`: `search_<c>_postings` (term, pk, tf), clustered by term so that one
term's postings are one range; `search_<c>_df` (term, df); the record length in
`search_<c>.length`; and the collection's record and token totals in `search_bm25`.
Writes collect their changes in a TermChanges and apply them once per transaction, so a
batch of records updates each frequency row once.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ragstream.common.models import Collection
from ragstream.common.storage.sqlite import bm25
from ragstream.common.storage.sqlite import search_schema as schema
from ragstream.common.storage.sqlite.search_schema import json_list
from ragstream.common.storage.sqlite.sql_filters import SqlWhere


@dataclass(slots=True)
class TermChanges:
    """One transaction's postings changes, written by `apply` in term order: a batch's
    inserts then walk the postings B-tree once instead of jumping about it per record."""

    added: dict[int, Counter[str]] = field(default_factory=dict)
    """pk -> tf of each (usable) term, for records indexed in this transaction."""
    removed: list[tuple[str, int]] = field(default_factory=list)
    df: Counter[str] = field(default_factory=Counter)
    peaks: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per added term: the highest tf and the shortest record length seen."""
    records: int = 0
    tokens: int = 0

    def add(self, pk: int, terms: list[str]) -> None:
        """Indexes a record's (usable) terms."""
        counts = self.added[pk] = Counter(terms)
        self.df.update(counts.keys())
        length = len(terms)
        for term, tf in counts.items():
            top_tf, shortest = self.peaks.get(term, (0, length))
            self.peaks[term] = (max(top_tf, tf), min(shortest, length))
        self.records += 1
        self.tokens += length

    def terms(self) -> set[str]:
        """Every term whose postings the changes so far touch."""
        return {term for counts in self.added.values() for term in counts} | {
            term for term, _ in self.removed
        }

    def remove(self, pk: int, terms: list[str]) -> None:
        """Unindexes a record; `terms` are the usable terms it was indexed with."""
        unique = set(terms)
        if self.added.pop(pk, None) is None:  # else indexed by this transaction: not written
            self.removed += [(term, pk) for term in unique]
        self.df.subtract(unique)
        self.records -= 1
        self.tokens -= len(terms)


def apply(
    conn: sqlite3.Connection, collection: Collection, tables: schema.Tables, changes: TermChanges
) -> None:
    """Writes the collected changes: one row per changed term, one for the totals.

    A term's highest tf and shortest length only ever grow and shrink: after deletes they
    may be past the true values, which keeps them upper bounds of the term's weight."""
    conn.executemany(
        f"DELETE FROM {tables.postings} WHERE term = ? AND pk = ?", sorted(changes.removed)
    )
    conn.executemany(
        f"INSERT INTO {tables.postings} (term, pk, tf) VALUES (?, ?, ?)",
        sorted(
            (term, pk, tf) for pk, counts in changes.added.items() for term, tf in counts.items()
        ),
    )
    moved = [(term, delta) for term, delta in changes.df.items() if delta]
    conn.executemany(
        f"INSERT INTO {tables.df} (term, df, max_tf, min_length) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (term) DO UPDATE SET df = df + excluded.df, "
        "max_tf = max(max_tf, excluded.max_tf), min_length = min(min_length, excluded.min_length)",
        [(term, delta, *changes.peaks.get(term, (0, _NO_LENGTH))) for term, delta in moved],
    )
    conn.executemany(
        f"DELETE FROM {tables.df} WHERE term = ? AND df <= 0",
        [(term,) for term, delta in moved if delta < 0],
    )
    conn.execute(
        "INSERT INTO search_bm25 (collection, records, tokens) VALUES (?, ?, ?) "
        "ON CONFLICT (collection) DO UPDATE "
        "SET records = records + excluded.records, tokens = tokens + excluded.tokens",
        (collection.value, changes.records, changes.tokens),
    )
    changes.added.clear()
    changes.removed.clear()
    changes.df.clear()
    changes.peaks.clear()
    changes.records = changes.tokens = 0


_NO_LENGTH = 2**62
"""min_length of a change that added no record: leaves the stored minimum as it is."""


def corpus(conn: sqlite3.Connection, collection: Collection) -> bm25.Corpus:
    row = conn.execute(
        "SELECT records, tokens FROM search_bm25 WHERE collection = ?", (collection.value,)
    ).fetchone()
    return bm25.Corpus(0, 0) if row is None else bm25.Corpus(int(row[0]), int(row[1]))


def term_stats(
    conn: sqlite3.Connection, tables: schema.Tables, terms: Sequence[str]
) -> list[bm25.TermStats]:
    """The statistics of those of `terms` that occur anywhere in the collection."""
    rows = conn.execute(
        f"SELECT term, df, max_tf, min_length FROM {tables.df} "
        "WHERE term IN (SELECT value FROM json_each(?))",
        (json_list(terms),),
    ).fetchall()
    return [bm25.TermStats(str(t), int(df), int(tf), int(n)) for t, df, tf, n in rows]


class SqlPostings:
    """bm25.PostingSource over the tables, within one workspace and filter."""

    def __init__(
        self, conn: sqlite3.Connection, tables: schema.Tables, workspace: str, where: SqlWhere
    ) -> None:
        self._conn = conn
        self._tables = tables
        self._params = (workspace, *where.params)
        # CROSS JOIN keeps the postings as the outer loop: one term's range drives, the
        # workspace and filter test each of its records by primary key.
        self._sql = (
            f"SELECT p.pk, p.tf, r.length FROM {tables.postings} AS p "
            f"CROSS JOIN {tables.records} AS r ON r.pk = p.pk "
            f"WHERE p.term = ? AND r.workspace = ? AND ({where.sql})"
        )

    def postings(self, term: str) -> bm25.Postings:
        rows = self._conn.execute(self._sql, (term, *self._params)).fetchall()
        flat = itertools.chain.from_iterable(rows)  # twice as fast as np.array(rows)
        table = np.fromiter(flat, dtype=np.float64, count=3 * len(rows)).reshape(len(rows), 3)
        return bm25.Postings(table[:, 0].astype(np.int64), table[:, 1], table[:, 2])

    def frequencies(self, term: str, pks: bm25.IntArray) -> tuple[bm25.IntArray, bm25.FloatArray]:
        rows = self._conn.execute(
            f"SELECT pk, tf FROM {self._tables.postings} "
            "WHERE term = ? AND pk IN (SELECT value FROM json_each(?))",
            (term, json_list(pks.tolist())),
        ).fetchall()
        table = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
        return table[:, 0], table[:, 1].astype(np.float64)
