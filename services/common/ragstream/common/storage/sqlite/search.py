"""The embedded SearchStore: BM25 over SQLite postings, an in-memory index for dense search.

Filters always run inside the search (BM25: in the WHERE that reads each term's postings;
dense: the allowed rows are selected before any vector is scored, or passed to the
approximate index's search), so a filtered search returns the best allowed records, not the
allowed part of an unfiltered top-k.

The vector index of a (collection, workspace) is loaded on its first search and then
updated by this instance's writes: an exact matrix (dense.py), or from `approximate_from`
vectors an approximate index (ann.py), built when a write crosses that size (about 15 s at
200k vectors, in that write) or when a large collection is loaded. Every write also bumps
the workspace's change counter in `search_state`; a search that finds the counter ahead of
its index (another instance or process wrote) reloads it (vector_files.py: from the
database, or the file an approximate index was saved to on close). A write updates the
index under the index lock just before its COMMIT, so searches never reload after this
instance's own writes; if the COMMIT then fails, the index is dropped and reloaded on the
next search.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord, Vector
from ragstream.common.storage.sqlite import bm25, lexical, search_rows, vector_files
from ragstream.common.storage.sqlite import search_schema as schema
from ragstream.common.storage.sqlite.ann import ApproximateIndex
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.dense import DenseIndex, VectorIndex
from ragstream.common.storage.sqlite.hit_cache import HitCache
from ragstream.common.storage.sqlite.postings_cache import PostingsCache

_Key = vector_files.Key
P = TypeVar("P")
log = logging.getLogger(__name__)

APPROXIMATE_FROM = 200_000
"""Vectors from which a (collection, workspace) is searched approximately (ann.py); below,
exact search is fast enough (100k x 384 in a few milliseconds) and never misses."""


class SqliteSearchStore:
    """SearchStore over one Database; create with `await SqliteSearchStore.open(db)`.

    `approximate_from`: the vectors from which a collection's dense search is approximate.
    Its approximate index is written beside the database on close, stamped with the change
    counter it reflects, and read back on the first search when the counter still matches.
    """

    def __init__(self, db: Database, approximate_from: int = APPROXIMATE_FROM) -> None:
        self._db = db
        self._approximate_from = approximate_from
        self._indexes: dict[_Key, VectorIndex] = {}
        self._locks: dict[_Key, threading.Lock] = {}
        self._locks_guard = threading.Lock()
        self._postings = PostingsCache()
        self._hits = HitCache()
        self._numbers: dict[str, int] = {}
        """Workspace -> its number in the postings: given once, never changed or taken back."""

    @classmethod
    async def open(
        cls, db: Database, approximate_from: int = APPROXIMATE_FROM
    ) -> SqliteSearchStore:
        await db.migrate("search", schema.MIGRATIONS)
        return cls(db, approximate_from)

    async def close(self) -> None:
        """Writes the approximate indexes beside the database and drops the in-memory
        vectors; the Database is closed by its owner."""
        indexes, self._indexes = self._indexes, {}
        for key, index in indexes.items():
            if isinstance(index, ApproximateIndex):
                try:
                    await asyncio.to_thread(vector_files.save, self._db.path.parent, key, index)
                except OSError as error:  # the index is built again from the database
                    log.warning("the %s vector index was not saved: %s", key[0].value, error)

    # -- writes ---------------------------------------------------------------------------

    async def upsert(self, collection: Collection, records: Sequence[SearchRecord]) -> None:
        if not records:
            return
        collection = Collection(collection)
        by_workspace: dict[str, list[SearchRecord]] = defaultdict(list)
        for record in records:
            by_workspace[record.workspace].append(record)

        def encode() -> dict[str, search_rows.Encoded]:
            return {ws: search_rows.encode(group) for ws, group in by_workspace.items()}

        def write(
            conn: sqlite3.Connection, encoded: dict[str, search_rows.Encoded], applied: list[_Key]
        ) -> None:
            changes = lexical.TermChanges()
            for workspace, group in encoded.items():
                self._upsert_group(conn, collection, workspace, group, applied, changes)
            lexical.apply(conn, collection, schema.tables(collection), changes)

        await self._write(write, encode)

    def _upsert_group(
        self,
        conn: sqlite3.Connection,
        collection: Collection,
        workspace: str,
        encoded: search_rows.Encoded,
        applied: list[_Key],
        changes: lexical.TermChanges,
    ) -> None:
        search_rows.check_dim(conn, collection, workspace, encoded)
        tables = schema.tables(collection)
        pks = search_rows.write_records(conn, tables, workspace, encoded, changes)
        generation = search_rows.bump_state(conn, collection, workspace, encoded.dim)
        self._postings.changed((collection, workspace), generation, changes.terms())
        self._hits.changed((collection, workspace), generation, pks)
        add = encoded.matrix
        self._apply((collection, workspace), generation, lambda index: index.upsert(pks, add))
        applied.append((collection, workspace))

    async def delete(self, collection: Collection, workspace: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        collection = Collection(collection)
        tables = schema.tables(collection)

        def write(conn: sqlite3.Connection, _: None, applied: list[_Key]) -> None:
            changes = lexical.TermChanges()
            pks = search_rows.delete_records(conn, tables, workspace, ids, changes)
            if not pks:
                return
            lexical.apply(conn, collection, tables, changes)
            dim = (
                search_rows.stored_dim(conn, collection, workspace)
                if search_rows.has_records(conn, tables, workspace)
                else None  # emptied: the next vectors may have another size
            )
            generation = search_rows.bump_state(conn, collection, workspace, dim)
            self._postings.changed((collection, workspace), generation, changes.terms())
            self._hits.changed((collection, workspace), generation, pks)
            self._apply((collection, workspace), generation, lambda index: index.remove(pks))
            applied.append((collection, workspace))

        await self._write(write, lambda: None)

    async def _write(
        self,
        fn: Callable[[sqlite3.Connection, P, list[_Key]], None],
        prepare: Callable[[], P],
    ) -> None:
        """Runs `fn` in a write transaction, given what `prepare` returns (run before it,
        outside the transaction: `Database.write_prepared`)."""
        applied: list[_Key] = []
        try:
            await self._db.write_prepared(
                prepare, lambda conn, prepared: fn(conn, prepared, applied)
            )
        except BaseException:
            # The matrices were updated for a transaction that did not commit.
            for key in applied:
                self._postings.forget(key)
                self._hits.forget(key)
                with self._lock(key):
                    self._indexes.pop(key, None)
            raise

    def _apply(self, key: _Key, generation: int, change: Callable[[VectorIndex], None]) -> None:
        with self._lock(key):
            index = self._indexes.get(key)
            if index is None:
                return
            if index.generation != generation - 1:
                del self._indexes[key]  # missed another writer's change: reload lazily
                return
            change(index)
            index.generation = generation
            if isinstance(index, DenseIndex) and len(index) >= self._approximate_from:
                self._indexes[key] = vector_files.approximate(index.rows(), generation)
            elif isinstance(index, ApproximateIndex) and (index.stale or not len(index)):
                del self._indexes[key]  # outgrown or emptied: built again on the next search

    def _lock(self, key: _Key) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

    # -- reads ----------------------------------------------------------------------------

    async def get(
        self, collection: Collection, workspace: str, ids: Sequence[str], *, whole: bool = True
    ) -> list[SearchRecord]:
        if not ids:
            return []
        tables = schema.tables(collection)
        wanted = schema.json_list(ids)

        def read(conn: sqlite3.Connection) -> list[SearchRecord]:
            rows = conn.execute(
                f"{tables.select_records} WHERE r.workspace = ? "
                "AND r.id IN (SELECT value FROM json_each(?))",
                (workspace, wanted),
            ).fetchall()
            found = {row[1]: schema.row_record(row[1:]) for row in rows}
            return [found[i] for i in dict.fromkeys(ids) if i in found]

        def read_hits(conn: sqlite3.Connection) -> list[SearchRecord]:
            # As hits carry them: decoded once per generation, in the hit cache.
            _, generation = search_rows.state(conn, collection, workspace)
            rows = conn.execute(
                f"SELECT id, pk FROM {tables.records} WHERE workspace = ? "
                "AND id IN (SELECT value FROM json_each(?))",
                (workspace, wanted),
            ).fetchall()
            pks: dict[str, int] = dict(rows)
            load = self._hit_loader(conn, (collection, workspace), generation)
            found = load(list(pks.values()))
            return [found[pks[i]] for i in dict.fromkeys(ids) if pks.get(i) in found]

        return await self._db.read(read if whole else read_hits)

    async def existing(
        self, collection: Collection, workspace: str, ids: Sequence[str]
    ) -> set[str]:
        if not ids:
            return set()
        tables = schema.tables(collection)

        def read(conn: sqlite3.Connection) -> set[str]:
            rows = conn.execute(
                f"SELECT id FROM {tables.records} WHERE workspace = ? "
                "AND id IN (SELECT value FROM json_each(?))",
                (workspace, schema.json_list(ids)),
            ).fetchall()
            return {row[0] for row in rows}

        return await self._db.read(read)

    async def count(self, collection: Collection, workspace: str) -> int:
        tables = schema.tables(collection)

        def read(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                f"SELECT count(*) FROM {tables.records} WHERE workspace = ?", (workspace,)
            ).fetchone()
            return int(row[0])

        return await self._db.read(read)

    async def search_terms(
        self,
        collection: Collection,
        workspace: str,
        terms: Sequence[str],
        search_filter: SearchFilter,
        limit: int,
    ) -> list[Hit]:
        unique = schema.query_terms(terms)
        if not unique or limit <= 0:
            return []
        collection = Collection(collection)
        tables = schema.tables(collection)
        where = search_rows.where(search_filter, tables)

        def read(conn: sqlite3.Connection) -> list[Hit]:
            source: bm25.PostingSource = lexical.SqlPostings(
                conn, tables, self._number(conn, workspace), where
            )
            terms = lexical.term_stats(conn, tables, unique)
            _, generation = search_rows.state(conn, collection, workspace)
            if search_filter.unrestricted:
                df = {t.term: t.df for t in terms}
                source = self._postings.source((collection, workspace), generation, source, df)
            scored = bm25.top(terms, lexical.corpus(conn, collection), source, limit)
            load = self._hit_loader(conn, (collection, workspace), generation)
            return search_rows.ranked_hits(conn, tables, scored, limit, load)

        return await self._db.read(read)

    async def search_vector(
        self,
        collection: Collection,
        workspace: str,
        vector: Vector,
        search_filter: SearchFilter,
        limit: int,
        min_score: float = -1.0,
    ) -> list[Hit]:
        [hits] = await self.search_vectors(
            collection, workspace, [vector], search_filter, limit, min_score
        )
        return hits

    async def search_vectors(
        self,
        collection: Collection,
        workspace: str,
        vectors: Sequence[Vector],
        search_filter: SearchFilter,
        limit: int,
        min_score: float = -1.0,
    ) -> list[list[Hit]]:
        if limit <= 0 or not vectors:
            return [[] for _ in vectors]
        collection = Collection(collection)
        queries = [np.asarray(vector, dtype=np.float32) for vector in vectors]
        tables = schema.tables(collection)
        key = (collection, workspace)

        def read(conn: sqlite3.Connection) -> list[list[Hit]]:
            allowed = (
                None
                if search_filter.unrestricted
                else search_rows.allowed_pks(conn, tables, workspace, search_filter)
            )
            stored = search_rows.state(conn, collection, workspace)
            with self._lock(key):
                index = self._current_index(conn, key, stored)
                scored = index.search_many(queries, allowed, limit, min_score)
            # The snapshot's generation, not the matrix's (which a write of this instance
            # may have moved ahead of it).
            load = self._hit_loader(conn, key, stored[1])
            records = load(sorted({pk for found in scored for pk, _ in found}))
            return [search_rows.hits(records, found) for found in scored]

        return await self._db.scan(read)

    async def similarities(
        self,
        collection: Collection,
        workspace: str,
        ids: Sequence[str],
        vector: Vector,
        search_filter: SearchFilter,
    ) -> dict[str, float]:
        if not ids:
            return {}
        collection = Collection(collection)
        query = np.asarray(vector, dtype=np.float32)
        tables = schema.tables(collection)
        key = (collection, workspace)

        def read(conn: sqlite3.Connection) -> dict[str, float]:
            found = search_rows.pks_of(conn, tables, workspace, ids, search_filter)
            with self._lock(key):
                stored = search_rows.state(conn, collection, workspace)
                scores = self._current_index(conn, key, stored).scores(query, list(found))
            return {found[pk]: score for pk, score in scores.items()}

        return await self._db.scan(read)

    def _number(self, conn: sqlite3.Connection, workspace: str) -> int | None:
        """The workspace's number (lexical.py), None while it has none; safe in any thread
        (a number read twice is the same number)."""
        number = self._numbers.get(workspace)
        if number is None:
            number = lexical.workspace_number(conn, workspace)
            if number is not None:
                self._numbers[workspace] = number
        return number

    def _hit_loader(
        self, conn: sqlite3.Connection, key: _Key, generation: int
    ) -> Callable[[list[int]], dict[int, SearchRecord]]:
        """Hit records of pks read at `generation`: cached, or read with `conn`."""
        tables = schema.tables(key[0])

        def load(pks: list[int]) -> dict[int, SearchRecord]:
            return self._hits.records(
                key, generation, pks, lambda missing: search_rows.hit_records(conn, tables, missing)
            )

        return load

    def _current_index(
        self, conn: sqlite3.Connection, key: _Key, stored: tuple[int | None, int]
    ) -> VectorIndex:
        """The key's index, loaded or reloaded when the stored change counter is ahead;
        `stored`: the snapshot's (vector size, change counter), `search_rows.state`."""
        generation = stored[1]
        index = self._indexes.get(key)
        if index is not None and index.generation >= generation:
            return index
        index = vector_files.saved(self._db.path.parent, key, generation)
        if index is None or len(index) < self._approximate_from:
            # None saved, or saved by a store that searches approximately from fewer vectors
            index = vector_files.load(conn, key, stored, self._approximate_from)
        self._indexes[key] = index
        return index
