"""Tables of the embedded search store, and SearchRecord <-> row conversion.

Per collection `<c>`, a record is spread over tables by how it is read:
- `search_<c>`: pk, workspace, id, timestamp, metadata, length (in BM25 terms). Narrow, so
  the scans that filters and BM25 joins make touch a few pages per thousand records;
- `search_<c>_data`: text, terms, doc ids, attrs, read only for the hits returned;
- `search_<c>_vectors`: the float32 vector, read when the in-memory matrix is loaded;
- `search_<c>_docs`: doc id -> pk, and `search_<c>_meta`: (key, value) -> pk, so doc id
  and metadata filters are index lookups;
- `search_<c>_postings`, `search_<c>_df`, `search_bm25` and `search_workspaces`: the BM25
  index (lexical.py).
`search_state` holds, per (collection, workspace), the vector size and a change counter
that every write increments, so an in-memory vector index can tell that it is stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragstream.common import json_text
from ragstream.common.models import NO_VECTOR, Collection, SearchRecord, Vector
from ragstream.common.storage.sqlite.db import Migration

_V1_TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* M* P* S* C*'"
"""The FTS5 tokenizer of schema version 1 (FTS5 is gone since version 2)."""

_V1_COLLECTIONS = ("chunks", "entities", "relations")
"""Fixed here, not derived from Collection: a new collection needs a new migration step."""


def _record_tables(name: str) -> list[str]:
    """A collection's record tables as schema version 1 made them (BM25 aside)."""
    table = f"search_{name}"
    child_pk = f"pk INTEGER PRIMARY KEY REFERENCES {table}(pk) ON DELETE CASCADE"
    return [
        f"CREATE TABLE {table} (pk INTEGER PRIMARY KEY, workspace TEXT NOT NULL, "
        "id TEXT NOT NULL, ts REAL, metadata TEXT NOT NULL, UNIQUE (workspace, id))",
        f"CREATE INDEX {table}_ts ON {table} (workspace, ts)",
        f"CREATE TABLE {table}_data ({child_pk}, text TEXT NOT NULL, "
        "terms TEXT NOT NULL, doc_ids TEXT NOT NULL, attrs TEXT NOT NULL)",
        f"CREATE TABLE {table}_vectors ({child_pk}, vector BLOB NOT NULL)",
        f"CREATE TABLE {table}_docs (doc_id TEXT NOT NULL, pk INTEGER NOT NULL "
        f"REFERENCES {table}(pk) ON DELETE CASCADE, PRIMARY KEY (doc_id, pk)) WITHOUT ROWID",
        f"CREATE INDEX {table}_docs_pk ON {table}_docs (pk)",
        f"CREATE TABLE {table}_meta (key TEXT NOT NULL, value TEXT NOT NULL, pk INTEGER "
        f"NOT NULL REFERENCES {table}(pk) ON DELETE CASCADE, PRIMARY KEY (key, value, pk)) "
        "WITHOUT ROWID",
        f"CREATE INDEX {table}_meta_pk ON {table}_meta (pk)",
    ]


def _postings_tables(name: str) -> list[str]:
    """A collection's BM25 tables as schema version 2 made them."""
    table = f"search_{name}"
    return [
        f"CREATE TABLE {table}_postings (term TEXT NOT NULL, pk INTEGER NOT NULL, "
        "tf INTEGER NOT NULL, PRIMARY KEY (term, pk)) WITHOUT ROWID",
        f"CREATE TABLE {table}_df (term TEXT PRIMARY KEY, df INTEGER NOT NULL, "
        "max_tf INTEGER NOT NULL, min_length INTEGER NOT NULL) WITHOUT ROWID",
        f"ALTER TABLE {table} ADD COLUMN length INTEGER NOT NULL DEFAULT 0",
    ]


def _v1_statements() -> list[str]:
    statements = [
        "CREATE TABLE search_state (collection TEXT NOT NULL, workspace TEXT NOT NULL, "
        "dim INTEGER, generation INTEGER NOT NULL, PRIMARY KEY (collection, workspace)) "
        "WITHOUT ROWID"
    ]
    for name in _V1_COLLECTIONS:
        statements += [
            *_record_tables(name),
            f"CREATE VIRTUAL TABLE search_{name}_fts USING fts5(terms, content='', "
            f'tokenize="{_V1_TOKENIZER}")',
        ]
    return statements


def _v2_statements() -> list[str]:
    """BM25 moves from FTS5 to postings with stored statistics: FTS5's bm25() reads every
    record a query term matches, so one common term cost a scan of the collection."""
    statements = [
        "CREATE TABLE search_bm25 (collection TEXT PRIMARY KEY, records INTEGER NOT NULL, "
        "tokens INTEGER NOT NULL) WITHOUT ROWID"
    ]
    for name in _V1_COLLECTIONS:
        table = f"search_{name}"
        statements += [
            *_postings_tables(name),
            f"INSERT INTO {table}_postings (term, pk, tf) SELECT t.value, d.pk, count(*) "
            f"FROM {table}_data AS d, json_each(d.terms) AS t WHERE trim(t.value) <> '' "
            "GROUP BY t.value, d.pk",
            f"UPDATE {table} SET length = (SELECT count(*) FROM {table}_data AS d, "
            f"json_each(d.terms) AS t WHERE d.pk = {table}.pk AND trim(t.value) <> '')",
            f"INSERT INTO {table}_df (term, df, max_tf, min_length) "
            f"SELECT p.term, count(*), max(p.tf), min(r.length) FROM {table}_postings AS p "
            f"JOIN {table} AS r ON r.pk = p.pk GROUP BY p.term",
            f"INSERT INTO search_bm25 (collection, records, tokens) "
            f"SELECT '{name}', count(*), coalesce(sum(length), 0) FROM {table}",
            f"DROP TABLE {table}_fts",
        ]
    return statements


def _v3_statements() -> list[str]:
    """The community reports' collection, in the shape the first two steps left the others."""
    return [
        *_record_tables("communities"),
        *_postings_tables("communities"),
        "INSERT INTO search_bm25 (collection, records, tokens) VALUES ('communities', 0, 0)",
    ]


_V4_COLLECTIONS = (*_V1_COLLECTIONS, "communities")


def _v4_statements() -> list[str]:
    """A posting carries its workspace's number and its record's length, so that an
    unfiltered search reads one range of the postings and nothing else: joining each posting
    to its record cost three times the read of the posting itself (0.75 of 1.1 us)."""
    statements = [
        "CREATE TABLE search_workspaces (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        "INSERT INTO search_workspaces (name) "
        + " UNION ".join(f"SELECT workspace FROM search_{name}" for name in _V4_COLLECTIONS)
        + " ORDER BY 1",
    ]
    for name in _V4_COLLECTIONS:
        table = f"search_{name}"
        statements += [
            f"ALTER TABLE {table}_postings RENAME TO {table}_postings_v3",
            f"CREATE TABLE {table}_postings (term TEXT NOT NULL, ws INTEGER NOT NULL, "
            "pk INTEGER NOT NULL, tf INTEGER NOT NULL, length INTEGER NOT NULL, "
            "PRIMARY KEY (term, ws, pk)) WITHOUT ROWID",
            f"INSERT INTO {table}_postings (term, ws, pk, tf, length) "
            f"SELECT p.term, w.id, p.pk, p.tf, r.length FROM {table}_postings_v3 AS p "
            f"JOIN {table} AS r ON r.pk = p.pk JOIN search_workspaces AS w ON w.name = r.workspace",
            f"DROP TABLE {table}_postings_v3",
        ]
    return statements


def _v5_statements() -> list[str]:
    """Entity names embedded alone (`Collection.NAMES`), in the shape the first four steps
    left the others."""
    table = "search_names"
    return [
        *_record_tables("names"),
        f"ALTER TABLE {table} ADD COLUMN length INTEGER NOT NULL DEFAULT 0",
        f"CREATE TABLE {table}_postings (term TEXT NOT NULL, ws INTEGER NOT NULL, "
        "pk INTEGER NOT NULL, tf INTEGER NOT NULL, length INTEGER NOT NULL, "
        "PRIMARY KEY (term, ws, pk)) WITHOUT ROWID",
        f"CREATE TABLE {table}_df (term TEXT PRIMARY KEY, df INTEGER NOT NULL, "
        "max_tf INTEGER NOT NULL, min_length INTEGER NOT NULL) WITHOUT ROWID",
        "INSERT INTO search_bm25 (collection, records, tokens) VALUES ('names', 0, 0)",
    ]


MIGRATIONS: tuple[Migration, ...] = (
    tuple(_v1_statements()),
    tuple(_v2_statements()),
    tuple(_v3_statements()),
    tuple(_v4_statements()),
    tuple(_v5_statements()),
)


@dataclass(frozen=True, slots=True)
class Tables:
    records: str
    data: str
    vectors: str
    docs: str
    meta: str
    postings: str
    df: str

    @property
    def select_records(self) -> str:
        """SELECT of (pk, *columns row_record reads) over `r` (records), `d`, `v`."""
        return (
            "SELECT r.pk, r.id, r.workspace, d.text, d.terms, v.vector, d.doc_ids, "
            f"r.metadata, r.ts, d.attrs FROM {self.records} AS r "
            f"JOIN {self.data} AS d ON d.pk = r.pk JOIN {self.vectors} AS v ON v.pk = r.pk"
        )

    @property
    def select_hits(self) -> str:
        """SELECT of (pk, *columns hit_record reads) over `r` (records) and `d`."""
        return (
            "SELECT r.pk, r.id, r.workspace, d.text, d.doc_ids, r.metadata, r.ts, d.attrs "
            f"FROM {self.records} AS r JOIN {self.data} AS d ON d.pk = r.pk"
        )


def tables(collection: Collection) -> Tables:
    name = f"search_{Collection(collection).value}"
    return Tables(
        records=name,
        data=f"{name}_data",
        vectors=f"{name}_vectors",
        docs=f"{name}_docs",
        meta=f"{name}_meta",
        postings=f"{name}_postings",
        df=f"{name}_df",
    )


def usable_terms(terms: Sequence[str]) -> list[str]:
    """The terms that are indexed and searched: blank ones never are."""
    return [term for term in terms if term.strip()]


def query_terms(terms: Sequence[str]) -> list[str]:
    """The distinct non-blank terms of a query, in their order."""
    return list(dict.fromkeys(term for term in terms if term.strip()))


def json_list(values: Sequence[str] | Sequence[int]) -> str:
    return json_text.dumps(list(values))


def _json(value: Any) -> str:
    return json_text.dumps(value)


@dataclass(frozen=True, slots=True)
class RecordRow:
    """A record's values per table (see the module docstring)."""

    record: tuple[object, ...]
    """workspace, id, ts, metadata, length"""
    data: tuple[object, ...]
    """text, terms, doc_ids, attrs"""
    vector: bytes


def record_row(record: SearchRecord, vector: Vector, length: int) -> RecordRow:
    """`vector` is the normalized one from `vectors.unit_vector`; `length` the count of the
    record's usable terms."""
    return RecordRow(
        record=(
            record.workspace,
            record.id,
            None if record.timestamp is None else float(record.timestamp),
            _json(dict(record.metadata)),
            length,
        ),
        data=(
            record.text,
            _json(list(record.terms)),
            _json(list(record.doc_ids)),
            _json(dict(record.attrs)),
        ),
        vector=vector.astype("<f4").tobytes(),
    )


def row_record(row: Sequence[Any]) -> SearchRecord:
    """A record from a row of Tables.select_records, without its leading pk."""
    return SearchRecord(
        id=row[0],
        workspace=row[1],
        text=row[2],
        terms=tuple(json_text.loads(row[3])),
        vector=np.frombuffer(row[4], dtype="<f4").astype(np.float32, copy=False),
        doc_ids=tuple(json_text.loads(row[5])),
        metadata=json_text.loads(row[6]),
        timestamp=row[7],
        attrs=json_text.loads(row[8]),
    )


def hit_record(row: Sequence[Any]) -> SearchRecord:
    """A hit's record (no terms, no vector) from a row of Tables.select_hits, without its pk."""
    return SearchRecord(
        id=row[0],
        workspace=row[1],
        text=row[2],
        terms=(),
        vector=NO_VECTOR,
        doc_ids=tuple(json_text.loads(row[3])),
        metadata=json_text.loads(row[4]),
        timestamp=row[5],
        attrs=json_text.loads(row[6]),
    )
