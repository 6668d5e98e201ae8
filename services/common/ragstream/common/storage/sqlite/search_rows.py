"""SQL of the embedded search store: record writes, filters, hits and vector loads.

Functions over an open connection inside a transaction that the caller (search.py)
holds; see search_schema.py for the tables.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragstream.common import json_text
from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord
from ragstream.common.storage.sqlite import lexical
from ragstream.common.storage.sqlite import search_schema as schema
from ragstream.common.storage.sqlite.dense import DimensionMismatchError, FloatMatrix, IntArray
from ragstream.common.storage.sqlite.search_schema import json_list
from ragstream.common.storage.sqlite.sql_filters import SqlWhere, filter_where
from ragstream.common.vectors import unit_vector


def where(search_filter: SearchFilter, tables: schema.Tables) -> SqlWhere:
    return filter_where(
        search_filter,
        metadata_sql=f"r.pk IN (SELECT pk FROM {tables.meta} WHERE key = ? AND value = ?)",
        timestamp_col="r.ts",
        doc_ids_sql=(
            f"r.pk IN (SELECT pk FROM {tables.docs} "
            "WHERE doc_id IN (SELECT value FROM json_each(?)))"
        ),
    )


def allowed_pks(
    conn: sqlite3.Connection,
    tables: schema.Tables,
    workspace: str,
    search_filter: SearchFilter,
) -> IntArray:
    """The pks of the workspace's records that pass the filter."""
    # Metadata and doc id conditions are `pk IN (index lookup)` and select few rows. Without
    # table statistics SQLite would still walk the whole workspace index and test each pk;
    # the unary + takes the workspace term out of index use, so the lookups drive.
    selective = bool(search_filter.metadata or search_filter.doc_ids)
    workspace_term = "+r.workspace = ?" if selective else "r.workspace = ?"
    where_ = where(search_filter, tables)
    cursor = conn.execute(
        f"SELECT r.pk FROM {tables.records} AS r WHERE {workspace_term} AND ({where_.sql})",
        (workspace, *where_.params),
    )
    return np.fromiter((pk for (pk,) in cursor), dtype=np.int64)


def pks_of(
    conn: sqlite3.Connection,
    tables: schema.Tables,
    workspace: str,
    ids: Sequence[str],
    search_filter: SearchFilter,
) -> dict[int, str]:
    """pk -> id of those of `ids` that the workspace holds and the filter allows."""
    where_ = where(search_filter, tables)
    rows = conn.execute(
        f"SELECT r.pk, r.id FROM {tables.records} AS r WHERE r.workspace = ? "
        f"AND r.id IN (SELECT value FROM json_each(?)) AND ({where_.sql})",
        (workspace, json_list(list(dict.fromkeys(ids))), *where_.params),
    ).fetchall()
    return {int(pk): str(record_id) for pk, record_id in rows}


def hit_records(
    conn: sqlite3.Connection, tables: schema.Tables, pks: list[int]
) -> dict[int, SearchRecord]:
    """pk -> hit record (no terms, no vector) of those of `pks` that exist."""
    if not pks:
        return {}
    rows = conn.execute(
        f"{tables.select_hits} WHERE r.pk IN (SELECT value FROM json_each(?))",
        (json_list(pks),),
    ).fetchall()
    return {row[0]: schema.hit_record(row[1:]) for row in rows}


def hits(records: Mapping[int, SearchRecord], scored: list[tuple[int, float]]) -> list[Hit]:
    """Hits for (pk, score) pairs, in their order; records deleted meanwhile are skipped."""
    return [Hit(records[pk], score) for pk, score in scored if pk in records]


def ranked_hits(
    conn: sqlite3.Connection,
    tables: schema.Tables,
    scored: list[tuple[int, float]],
    limit: int,
    load: Callable[[list[int]], Mapping[int, SearchRecord]],
) -> list[Hit]:
    """The best `limit` of (pk, score) as hits, their records from `load`; equal scores in
    id order."""
    if len(scored) > limit:  # ties at the cut: the ids decide which records stay
        rows = conn.execute(
            f"SELECT pk, id FROM {tables.records} WHERE pk IN (SELECT value FROM json_each(?))",
            (json_list([pk for pk, _ in scored]),),
        ).fetchall()
        ids = dict(rows)
        scored = sorted(scored, key=lambda pair: (-pair[1], ids.get(pair[0], "")))[:limit]
    found = hits(load([pk for pk, _ in scored]), scored)
    return sorted(found, key=lambda hit: (-hit.score, hit.record.id))


def stored_dim(conn: sqlite3.Connection, collection: Collection, workspace: str) -> int | None:
    row = conn.execute(
        "SELECT dim FROM search_state WHERE collection = ? AND workspace = ?",
        (collection.value, workspace),
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def state(
    conn: sqlite3.Connection, collection: Collection, workspace: str
) -> tuple[int | None, int]:
    """(vector size, change counter) of the workspace's records in the collection."""
    row = conn.execute(
        "SELECT dim, generation FROM search_state WHERE collection = ? AND workspace = ?",
        (collection.value, workspace),
    ).fetchone()
    return (None, 0) if row is None else (row[0], int(row[1]))


def bump_state(
    conn: sqlite3.Connection, collection: Collection, workspace: str, dim: int | None
) -> int:
    row = conn.execute(
        "INSERT INTO search_state (collection, workspace, dim, generation) VALUES (?, ?, ?, 1) "
        "ON CONFLICT (collection, workspace) DO UPDATE "
        "SET dim = excluded.dim, generation = generation + 1 RETURNING generation",
        (collection.value, workspace, dim),
    ).fetchone()
    return int(row[0])


@dataclass(frozen=True, slots=True)
class Encoded:
    """Records of one workspace (distinct ids) as their rows will hold them: encoded before
    the write transaction (`Database.write_prepared`), which then only runs the SQL."""

    records: list[SearchRecord]
    rows: list[schema.RecordRow]
    terms: list[Counter[str]]
    """Per record, the count of each usable term (its BM25 postings)."""
    matrix: FloatMatrix
    """The unit vectors, one row per record."""

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])


def encode(records: Sequence[SearchRecord]) -> Encoded:
    """The rows of records of one workspace, all of one vector size. A record given twice
    is written once, as its last copy (what writing each in turn would leave)."""
    unique = list({record.id: record for record in records}.values())
    vectors = [unit_vector(record.vector, record.id) for record in unique]
    dim = vectors[0].shape[0]
    for record, vector in zip(unique, vectors, strict=True):
        if vector.shape[0] != dim:
            raise DimensionMismatchError(
                f"records of one write hold vectors of different sizes: {unique[0].id!r} "
                f"has {dim}, {record.id!r} {vector.shape[0]}"
            )
    terms = [Counter(schema.usable_terms(record.terms)) for record in unique]
    rows = [
        schema.record_row(record, vector, counts.total())
        for record, vector, counts in zip(unique, vectors, terms, strict=True)
    ]
    return Encoded(unique, rows, terms, np.stack(vectors))


def check_dim(
    conn: sqlite3.Connection, collection: Collection, workspace: str, encoded: Encoded
) -> None:
    """Refuses vectors of another size than those the workspace holds in the collection."""
    dim = stored_dim(conn, collection, workspace)
    if dim is not None and encoded.dim != dim:
        raise DimensionMismatchError(
            f"{collection.value} of workspace {workspace!r} hold {dim}-d vectors, "
            f"record {encoded.records[0].id!r} has {encoded.dim}: the embedding model "
            "changed; rebuild the index (re-ingest into a new data_dir)"
        )


def write_records(
    conn: sqlite3.Connection,
    tables: schema.Tables,
    workspace: str,
    encoded: Encoded,
    changes: lexical.TermChanges,
) -> list[int]:
    """Inserts or replaces records of one workspace with their BM25, doc-id and metadata
    rows, a few statements for all of them; returns their pks, in order.

    A new record gets the pk SQLite would give it (one past the largest), so the tables end
    as writing the records one by one would leave them.
    """
    records, rows = encoded.records, encoded.rows
    ws = lexical.number_workspace(conn, workspace)
    stored = _stored(conn, tables, workspace, [record.id for record in records])
    (top,) = conn.execute(f"SELECT coalesce(max(pk), 0) FROM {tables.records}").fetchone()
    pks: list[int] = []
    added: list[tuple[object, ...]] = []
    replaced: list[tuple[object, ...]] = []
    for record, row in zip(records, rows, strict=True):
        old = stored.get(record.id)
        if old is None:
            top += 1
            pks.append(top)
            added.append((top, *row.record))
            continue
        pk, old_terms = old
        changes.remove(pk, ws, _indexed(old_terms))
        pks.append(pk)
        replaced.append((*row.record[2:], pk))
    conn.executemany(
        f"INSERT INTO {tables.records} (pk, workspace, id, ts, metadata, length) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        added,
    )
    conn.executemany(
        f"UPDATE {tables.records} SET ts = ?, metadata = ?, length = ? WHERE pk = ?", replaced
    )
    conn.executemany(f"DELETE FROM {tables.docs} WHERE pk = ?", [(r[-1],) for r in replaced])
    conn.executemany(f"DELETE FROM {tables.meta} WHERE pk = ?", [(r[-1],) for r in replaced])
    conn.executemany(
        f"INSERT OR REPLACE INTO {tables.data} (pk, text, terms, doc_ids, attrs) "
        "VALUES (?, ?, ?, ?, ?)",
        [(pk, *row.data) for pk, row in zip(pks, rows, strict=True)],
    )
    conn.executemany(
        f"INSERT OR REPLACE INTO {tables.vectors} (pk, vector) VALUES (?, ?)",
        [(pk, row.vector) for pk, row in zip(pks, rows, strict=True)],
    )
    for pk, counts in zip(pks, encoded.terms, strict=True):
        changes.add(pk, ws, counts)
    conn.executemany(
        f"INSERT OR IGNORE INTO {tables.docs} (doc_id, pk) VALUES (?, ?)",
        [(doc_id, pk) for pk, r in zip(pks, records, strict=True) for doc_id in r.doc_ids],
    )
    conn.executemany(
        f"INSERT INTO {tables.meta} (key, value, pk) VALUES (?, ?, ?)",
        [(k, v, pk) for pk, r in zip(pks, records, strict=True) for k, v in r.metadata.items()],
    )
    return pks


def _stored(
    conn: sqlite3.Connection, tables: schema.Tables, workspace: str, ids: Sequence[str]
) -> dict[str, tuple[int, str]]:
    """id -> (pk, terms JSON) of those of `ids` stored in the workspace."""
    rows = conn.execute(
        f"SELECT r.id, r.pk, d.terms FROM {tables.records} AS r JOIN {tables.data} AS d "
        "ON d.pk = r.pk WHERE r.workspace = ? AND r.id IN (SELECT value FROM json_each(?))",
        (workspace, json_list(ids)),
    ).fetchall()
    return {str(row[0]): (int(row[1]), str(row[2])) for row in rows}


def delete_records(
    conn: sqlite3.Connection,
    tables: schema.Tables,
    workspace: str,
    ids: Sequence[str],
    changes: lexical.TermChanges,
) -> list[int]:
    """Deletes the records that exist among `ids`; returns their pks."""
    stored = _stored(conn, tables, workspace, list(dict.fromkeys(ids)))
    if not stored:
        return []
    ws = lexical.number_workspace(conn, workspace)
    pks: list[int] = []
    for pk, terms in stored.values():
        changes.remove(pk, ws, _indexed(terms))
        pks.append(pk)
    # The other tables' rows go with the record (ON DELETE CASCADE).
    conn.executemany(f"DELETE FROM {tables.records} WHERE pk = ?", [(pk,) for pk in pks])
    return pks


def has_records(conn: sqlite3.Connection, tables: schema.Tables, workspace: str) -> bool:
    row = conn.execute(
        f"SELECT 1 FROM {tables.records} WHERE workspace = ? LIMIT 1", (workspace,)
    ).fetchone()
    return row is not None


def _indexed(terms_json: str) -> list[str]:
    """The usable terms a stored record was indexed with."""
    return schema.usable_terms(json_text.loads(terms_json))


def load_matrix(
    conn: sqlite3.Connection, tables: schema.Tables, pks: IntArray, dim: int, block: int
) -> FloatMatrix:
    """The vectors of `pks` (ascending, every one stored), as rows in their order: read
    `block` at a time into the matrix, so loading never holds the collection twice."""
    matrix = np.empty((len(pks), dim), dtype=np.float32)
    filled = 0
    for found, rows in vector_blocks(conn, tables, pks, dim, block):
        if not np.array_equal(found, pks[filled : filled + len(found)]):
            raise RuntimeError(f"{tables.vectors}: a record without its vector")  # unreachable
        matrix[filled : filled + len(found)] = rows
        filled += len(found)
    return matrix


def vector_pks(conn: sqlite3.Connection, tables: schema.Tables, workspace: str) -> IntArray:
    """The pks of the workspace's vectors, ascending."""
    rows = conn.execute(
        f"SELECT pk FROM {tables.records} WHERE workspace = ? ORDER BY pk", (workspace,)
    ).fetchall()
    return np.fromiter((pk for (pk,) in rows), dtype=np.int64, count=len(rows))


def vector_blocks(
    conn: sqlite3.Connection, tables: schema.Tables, pks: IntArray, dim: int, size: int
) -> Iterator[tuple[IntArray, FloatMatrix]]:
    """The vectors of `pks` (ascending), `size` at a time, so that loading a large
    collection never holds more than one block beside what it builds."""
    for start in range(0, len(pks), size):
        wanted = pks[start : start + size]
        found = conn.execute(
            f"SELECT pk, vector FROM {tables.vectors} "
            "WHERE pk IN (SELECT value FROM json_each(?)) ORDER BY pk",
            (json_list(wanted.tolist()),),
        ).fetchall()
        block = np.fromiter((pk for pk, _ in found), dtype=np.int64, count=len(found))
        flat = np.frombuffer(b"".join(blob for _, blob in found), dtype="<f4")
        yield block, flat.astype(np.float32).reshape(len(found), dim)
