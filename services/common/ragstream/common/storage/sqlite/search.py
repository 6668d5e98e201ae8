"""The embedded SearchStore: SQLite FTS5 for BM25, an in-memory matrix for dense search.

Filters always run inside the SQL (BM25: in the WHERE of the MATCH query; dense: the
allowed rows are selected before any vector is scored), so a filtered search returns the
best allowed records, not the allowed part of an unfiltered top-k.

The vector matrix of a (collection, workspace) is loaded on its first search and then
updated by this instance's writes. Every write also bumps the workspace's change counter
in `search_state`; a search that finds the counter ahead of its matrix (another instance
or process wrote) reloads it. A write updates the matrix under the index lock just before
its COMMIT, so searches never reload after this instance's own writes; if the COMMIT then
fails, the matrix is dropped and reloaded on the next search.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np

from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord, Vector
from ragstream.common.storage.sqlite import search_schema as schema
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.dense import DenseIndex, DimensionMismatchError, IntArray
from ragstream.common.storage.sqlite.sql_filters import SqlWhere, filter_where

_Key = tuple[Collection, str]


class SqliteSearchStore:
    """SearchStore over one Database; create with `await SqliteSearchStore.open(db)`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._indexes: dict[_Key, DenseIndex] = {}
        self._locks: dict[_Key, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    @classmethod
    async def open(cls, db: Database) -> SqliteSearchStore:
        await db.migrate("search", schema.MIGRATIONS)
        return cls(db)

    async def close(self) -> None:
        """Drops the in-memory vectors; the Database is closed by its owner."""
        self._indexes.clear()

    # -- writes ---------------------------------------------------------------------------

    async def upsert(self, collection: Collection, records: Sequence[SearchRecord]) -> None:
        if not records:
            return
        collection = Collection(collection)
        by_workspace: dict[str, list[SearchRecord]] = defaultdict(list)
        for record in records:
            by_workspace[record.workspace].append(record)

        def write(conn: sqlite3.Connection, applied: list[_Key]) -> None:
            for workspace, group in by_workspace.items():
                self._upsert_group(conn, collection, workspace, group, applied)

        await self._write(write)

    def _upsert_group(
        self,
        conn: sqlite3.Connection,
        collection: Collection,
        workspace: str,
        records: list[SearchRecord],
        applied: list[_Key],
    ) -> None:
        vectors = [schema.encode_vector(record.vector, record.id) for record in records]
        dim = _stored_dim(conn, collection, workspace)
        for record, vector in zip(records, vectors, strict=True):
            if dim is not None and vector.shape[0] != dim:
                raise DimensionMismatchError(
                    f"{collection.value} of workspace {workspace!r} hold {dim}-d vectors, "
                    f"record {record.id!r} has {vector.shape[0]}: the embedding model "
                    "changed; rebuild the index (re-ingest into a new data_dir)"
                )
            dim = vector.shape[0]
        tables = schema.tables(collection)
        pks = [
            _write_record(conn, tables, record, vector)
            for record, vector in zip(records, vectors, strict=True)
        ]
        generation = _bump_state(conn, collection, workspace, dim)
        matrix = np.stack(vectors)
        self._apply((collection, workspace), generation, lambda index: index.upsert(pks, matrix))
        applied.append((collection, workspace))

    async def delete(self, collection: Collection, workspace: str, ids: Sequence[str]) -> None:
        if not ids:
            return
        collection = Collection(collection)
        tables = schema.tables(collection)

        def write(conn: sqlite3.Connection, applied: list[_Key]) -> None:
            pks = [
                pk
                for pk in (_delete_record(conn, tables, workspace, i) for i in dict.fromkeys(ids))
                if pk is not None
            ]
            if not pks:
                return
            empty = (
                conn.execute(
                    f"SELECT 1 FROM {tables.records} WHERE workspace = ? LIMIT 1", (workspace,)
                ).fetchone()
                is None
            )
            dim = None if empty else _stored_dim(conn, collection, workspace)
            generation = _bump_state(conn, collection, workspace, dim)
            self._apply((collection, workspace), generation, lambda index: index.remove(pks))
            applied.append((collection, workspace))

        await self._write(write)

    async def _write(self, fn: Callable[[sqlite3.Connection, list[_Key]], None]) -> None:
        applied: list[_Key] = []
        try:
            await self._db.write(lambda conn: fn(conn, applied))
        except BaseException:
            # The matrices were updated for a transaction that did not commit.
            for key in applied:
                with self._lock(key):
                    self._indexes.pop(key, None)
            raise

    def _apply(self, key: _Key, generation: int, change: Callable[[DenseIndex], None]) -> None:
        with self._lock(key):
            index = self._indexes.get(key)
            if index is None:
                return
            if index.generation == generation - 1:
                change(index)
                index.generation = generation
            else:
                del self._indexes[key]  # missed another writer's change: reload lazily

    def _lock(self, key: _Key) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(key, threading.Lock())

    # -- reads ----------------------------------------------------------------------------

    async def get(
        self, collection: Collection, workspace: str, ids: Sequence[str]
    ) -> list[SearchRecord]:
        if not ids:
            return []
        tables = schema.tables(collection)

        def read(conn: sqlite3.Connection) -> list[SearchRecord]:
            rows = conn.execute(
                f"{tables.select_records} WHERE r.workspace = ? "
                "AND r.id IN (SELECT value FROM json_each(?))",
                (workspace, _json_list(ids)),
            ).fetchall()
            found = {row[1]: schema.row_record(row[1:]) for row in rows}
            return [found[i] for i in dict.fromkeys(ids) if i in found]

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
        query = schema.fts_query(terms)
        if not query or limit <= 0:
            return []
        tables = schema.tables(collection)
        where = _where(search_filter, tables)
        # CROSS JOIN keeps FTS as the outer loop: the MATCH drives, filters prune its rows.
        sql = (
            f"SELECT r.pk, -bm25({tables.fts}) AS score FROM {tables.fts} "
            f"CROSS JOIN {tables.records} AS r ON r.pk = {tables.fts}.rowid "
            f"WHERE {tables.fts} MATCH ? AND r.workspace = ? AND ({where.sql}) "
            "ORDER BY score DESC, r.id LIMIT ?"
        )

        def read(conn: sqlite3.Connection) -> list[Hit]:
            scored = conn.execute(sql, (query, workspace, *where.params, limit)).fetchall()
            return _hits(conn, tables, [(int(pk), float(score)) for pk, score in scored])

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
        if limit <= 0:
            return []
        collection = Collection(collection)
        query = np.asarray(vector, dtype=np.float32)
        tables = schema.tables(collection)
        where = None if search_filter.is_empty else _where(search_filter, tables)
        key = (collection, workspace)

        def read(conn: sqlite3.Connection) -> list[Hit]:
            allowed = None if where is None else _allowed_pks(conn, tables, workspace, where)
            with self._lock(key):
                index = self._current_index(conn, key)
                scored = index.search(query, allowed, limit, min_score)
            return _hits(conn, tables, scored)

        return await self._db.read(read)

    def _current_index(self, conn: sqlite3.Connection, key: _Key) -> DenseIndex:
        """The key's matrix, loaded or reloaded when the stored change counter is ahead."""
        collection, workspace = key
        row = conn.execute(
            "SELECT dim, generation FROM search_state WHERE collection = ? AND workspace = ?",
            (collection.value, workspace),
        ).fetchone()
        dim, generation = (None, 0) if row is None else (row[0], int(row[1]))
        index = self._indexes.get(key)
        if index is not None and index.generation >= generation:
            return index
        tables = schema.tables(collection)
        # pk IN (...) visits the vectors in pk order, i.e. mostly sequentially.
        rows = conn.execute(
            f"SELECT pk, vector FROM {tables.vectors} "
            f"WHERE pk IN (SELECT pk FROM {tables.records} WHERE workspace = ?)",
            (workspace,),
        ).fetchall()
        pks = np.fromiter((pk for pk, _ in rows), dtype=np.int64, count=len(rows))
        flat = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4")
        matrix = flat.astype(np.float32, copy=False).reshape(len(rows), dim or 0)
        index = DenseIndex(dim, pks, matrix, generation)
        self._indexes[key] = index
        return index


def _json_list(values: Sequence[str] | Sequence[int]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def _where(search_filter: SearchFilter, tables: schema.Tables) -> SqlWhere:
    return filter_where(
        search_filter,
        metadata_sql=f"r.pk IN (SELECT pk FROM {tables.meta} WHERE key = ? AND value = ?)",
        timestamp_col="r.ts",
        doc_ids_sql=(
            f"r.pk IN (SELECT pk FROM {tables.docs} "
            "WHERE doc_id IN (SELECT value FROM json_each(?)))"
        ),
    )


def _allowed_pks(
    conn: sqlite3.Connection, tables: schema.Tables, workspace: str, where: SqlWhere
) -> IntArray:
    cursor = conn.execute(
        f"SELECT r.pk FROM {tables.records} AS r WHERE r.workspace = ? AND ({where.sql})",
        (workspace, *where.params),
    )
    return np.fromiter((pk for (pk,) in cursor), dtype=np.int64)


def _hits(
    conn: sqlite3.Connection, tables: schema.Tables, scored: list[tuple[int, float]]
) -> list[Hit]:
    """Hits for (pk, score) pairs, in their order; records deleted meanwhile are skipped."""
    if not scored:
        return []
    rows = conn.execute(
        f"{tables.select_records} WHERE r.pk IN (SELECT value FROM json_each(?))",
        (_json_list([pk for pk, _ in scored]),),
    ).fetchall()
    records = {row[0]: schema.row_record(row[1:]) for row in rows}
    return [Hit(records[pk], score) for pk, score in scored if pk in records]


def _stored_dim(conn: sqlite3.Connection, collection: Collection, workspace: str) -> int | None:
    row = conn.execute(
        "SELECT dim FROM search_state WHERE collection = ? AND workspace = ?",
        (collection.value, workspace),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _bump_state(
    conn: sqlite3.Connection, collection: Collection, workspace: str, dim: int | None
) -> int:
    row = conn.execute(
        "INSERT INTO search_state (collection, workspace, dim, generation) VALUES (?, ?, ?, 1) "
        "ON CONFLICT (collection, workspace) DO UPDATE "
        "SET dim = excluded.dim, generation = generation + 1 RETURNING generation",
        (collection.value, workspace, dim),
    ).fetchone()
    return int(row[0])


def _write_record(
    conn: sqlite3.Connection, tables: schema.Tables, record: SearchRecord, vector: Vector
) -> int:
    """Inserts or replaces one record with its FTS and doc-id rows; returns its pk."""
    row = schema.record_row(record, vector)
    old = _find(conn, tables, record.workspace, record.id)
    if old is None:
        cursor = conn.execute(
            f"INSERT INTO {tables.records} (workspace, id, ts, metadata) VALUES (?, ?, ?, ?)",
            row.record,
        )
        pk = int(cursor.lastrowid or 0)
    else:
        pk, old_terms = old
        _fts_delete(conn, tables, pk, old_terms)
        conn.execute(
            f"UPDATE {tables.records} SET ts = ?, metadata = ? WHERE pk = ?",
            (*row.record[2:], pk),
        )
        conn.execute(f"DELETE FROM {tables.docs} WHERE pk = ?", (pk,))
        conn.execute(f"DELETE FROM {tables.meta} WHERE pk = ?", (pk,))
    conn.execute(
        f"INSERT OR REPLACE INTO {tables.data} (pk, text, terms, doc_ids, attrs) "
        "VALUES (?, ?, ?, ?, ?)",
        (pk, *row.data),
    )
    conn.execute(
        f"INSERT OR REPLACE INTO {tables.vectors} (pk, vector) VALUES (?, ?)", (pk, row.vector)
    )
    conn.execute(
        f"INSERT INTO {tables.fts} (rowid, terms) VALUES (?, ?)",
        (pk, schema.fts_text(record.terms)),
    )
    conn.executemany(
        f"INSERT OR IGNORE INTO {tables.docs} (doc_id, pk) VALUES (?, ?)",
        [(doc_id, pk) for doc_id in record.doc_ids],
    )
    conn.executemany(
        f"INSERT INTO {tables.meta} (key, value, pk) VALUES (?, ?, ?)",
        [(key, value, pk) for key, value in record.metadata.items()],
    )
    return pk


def _find(
    conn: sqlite3.Connection, tables: schema.Tables, workspace: str, record_id: str
) -> tuple[int, str] | None:
    """(pk, terms JSON) of the stored record, if any."""
    row = conn.execute(
        f"SELECT r.pk, d.terms FROM {tables.records} AS r JOIN {tables.data} AS d "
        "ON d.pk = r.pk WHERE r.workspace = ? AND r.id = ?",
        (workspace, record_id),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def _delete_record(
    conn: sqlite3.Connection, tables: schema.Tables, workspace: str, record_id: str
) -> int | None:
    old = _find(conn, tables, workspace, record_id)
    if old is None:
        return None
    pk, terms = old
    _fts_delete(conn, tables, pk, terms)
    conn.execute(f"DELETE FROM {tables.records} WHERE pk = ?", (pk,))  # the rest cascades
    return pk


def _fts_delete(conn: sqlite3.Connection, tables: schema.Tables, pk: int, terms_json: str) -> None:
    """Removes a row from the contentless FTS table, which needs the exact indexed text."""
    conn.execute(
        f"INSERT INTO {tables.fts} ({tables.fts}, rowid, terms) VALUES ('delete', ?, ?)",
        (pk, schema.fts_text(json.loads(terms_json))),
    )
