"""SQL of the embedded store's BM25 index: postings, document frequencies, corpus totals.

Per collection `<c>`: `search_<c>_postings` (term, ws, pk, tf, length), clustered by term
and workspace so that one term's postings in one workspace are one range that holds all a
score needs (`ws` numbers the workspace in `search_workspaces`; the record's length is
copied from `search_<c>.length`, a record's postings being rewritten whenever it is); an
unfiltered search reads that range alone, a filtered one tests each posting's record.
`search_<c>_df` holds (term, df) and the collection's record and token totals are in
`search_bm25`. Writes collect their changes in a TermChanges and apply them once per
transaction, so a batch of records updates each frequency row once.
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

    added: dict[int, tuple[int, Counter[str]]] = field(default_factory=dict)
    """pk -> (workspace number, tf of each usable term), for records indexed in this
    transaction."""
    removed: list[tuple[str, int, int]] = field(default_factory=list)
    """(term, workspace number, pk) of each posting to delete."""
    df: Counter[str] = field(default_factory=Counter)
    peaks: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per added term: the highest tf and the shortest record length seen."""
    records: int = 0
    tokens: int = 0

    def add(self, pk: int, ws: int, counts: Counter[str]) -> None:
        """Indexes a record by the count of each of its (usable) terms; `ws` numbers its
        workspace (`number_workspace`)."""
        self.added[pk] = (ws, counts)
        self.df.update(counts.keys())
        length = counts.total()
        for term, tf in counts.items():
            top_tf, shortest = self.peaks.get(term, (0, length))
            self.peaks[term] = (max(top_tf, tf), min(shortest, length))
        self.records += 1
        self.tokens += length

    def terms(self) -> set[str]:
        """Every term whose postings the changes so far touch."""
        return {term for _, counts in self.added.values() for term in counts} | {
            term for term, _, _ in self.removed
        }

    def remove(self, pk: int, ws: int, terms: list[str]) -> None:
        """Unindexes a record; `terms` are the usable terms it was indexed with."""
        unique = set(terms)
        if self.added.pop(pk, None) is None:  # else indexed by this transaction: not written
            self.removed += [(term, ws, pk) for term in unique]
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
        f"DELETE FROM {tables.postings} WHERE term = ? AND ws = ? AND pk = ?",
        sorted(changes.removed),
    )
    conn.executemany(
        f"INSERT INTO {tables.postings} (term, ws, pk, tf, length) VALUES (?, ?, ?, ?, ?)",
        sorted(
            (term, ws, pk, tf, length)
            for pk, (ws, counts) in changes.added.items()
            for length in (counts.total(),)
            for term, tf in counts.items()
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


def workspace_number(conn: sqlite3.Connection, workspace: str) -> int | None:
    """The number of `workspace` in the postings; None before its first write."""
    row = conn.execute("SELECT id FROM search_workspaces WHERE name = ?", (workspace,)).fetchone()
    return None if row is None else int(row[0])


def number_workspace(conn: sqlite3.Connection, workspace: str) -> int:
    """The number of `workspace`, given it now if this is its first write."""
    (number,) = conn.execute(
        "INSERT INTO search_workspaces (name) VALUES (?) "
        "ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id",
        (workspace,),
    ).fetchone()
    return int(number)


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
        self, conn: sqlite3.Connection, tables: schema.Tables, ws: int | None, where: SqlWhere
    ) -> None:
        """`ws`: the workspace's number (None: it has never been written, so holds nothing)."""
        self._conn = conn
        self._tables = tables
        self._ws = ws
        self._params = where.params
        self._sql = f"SELECT pk, tf, length FROM {tables.postings} WHERE term = ? AND ws = ?"
        if where.sql != "1":
            # CROSS JOIN keeps the postings as the outer loop: the term's range drives, the
            # filter tests each of its records by primary key.
            self._sql = (
                f"SELECT p.pk, p.tf, p.length FROM {tables.postings} AS p "
                f"CROSS JOIN {tables.records} AS r ON r.pk = p.pk "
                f"WHERE p.term = ? AND p.ws = ? AND ({where.sql})"
            )

    def postings(self, term: str) -> bm25.Postings:
        if self._ws is None:
            return bm25.Postings(np.empty(0, np.int64), np.empty(0), np.empty(0))
        rows = self._conn.execute(self._sql, (term, self._ws, *self._params)).fetchall()
        flat = itertools.chain.from_iterable(rows)  # twice as fast as np.array(rows)
        table = np.fromiter(flat, dtype=np.float64, count=3 * len(rows)).reshape(len(rows), 3)
        return bm25.Postings(table[:, 0].astype(np.int64), table[:, 1], table[:, 2])

    def frequencies(self, term: str, pks: bm25.IntArray) -> tuple[bm25.IntArray, bm25.FloatArray]:
        rows = self._conn.execute(
            f"SELECT pk, tf FROM {self._tables.postings} "
            "WHERE term = ? AND ws = ? AND pk IN (SELECT value FROM json_each(?))",
            (term, self._ws, json_list(pks.tolist())),
        ).fetchall()
        table = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
        return table[:, 0], table[:, 1].astype(np.float64)
