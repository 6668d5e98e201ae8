"""Tables of the embedded search store, and SearchRecord <-> row conversion.

Per collection `<c>`, a record is spread over tables by how it is read:
- `search_<c>`: pk, workspace, id, timestamp, metadata. Narrow, so the scans that filters
  and BM25 joins make touch a few pages per thousand records;
- `search_<c>_data`: text, terms, doc ids, attrs, read only for the hits returned;
- `search_<c>_vectors`: the float32 vector, read when the in-memory matrix is loaded;
- `search_<c>_docs`: doc id -> pk, and `search_<c>_meta`: (key, value) -> pk, so doc id
  and metadata filters are index lookups;
- `search_<c>_fts`: FTS5 over the BM25 terms (contentless: the terms are in `_data`).
`search_state` holds, per (collection, workspace), the vector size and a change counter
that every write increments, so an in-memory vector index can tell that it is stale.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragstream.common.models import Collection, SearchRecord, Vector
from ragstream.common.storage.sqlite.db import Migration
from ragstream.common.storage.sqlite.dense import normalized

FTS_TOKENIZER = "unicode61 remove_diacritics 0 categories 'L* N* M* P* S* C*'"
"""Every character except Unicode separators (Z*: the space joining terms) is a token
character, so each analyzer term is exactly one token: a CJK word stays whole, and `-`,
`_`, `.`, `+` or digits never split a term. unicode61 folds case (terms are lowercase
anyway) and, with remove_diacritics 0, keeps accents distinct, as the analyzer does."""

_V1_COLLECTIONS = ("chunks", "entities", "relations")
"""Fixed here, not derived from Collection: a new collection needs a new migration step."""


def _v1_statements() -> list[str]:
    statements = [
        "CREATE TABLE search_state (collection TEXT NOT NULL, workspace TEXT NOT NULL, "
        "dim INTEGER, generation INTEGER NOT NULL, PRIMARY KEY (collection, workspace)) "
        "WITHOUT ROWID"
    ]
    for name in _V1_COLLECTIONS:
        table = f"search_{name}"
        child_pk = f"pk INTEGER PRIMARY KEY REFERENCES {table}(pk) ON DELETE CASCADE"
        statements += [
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
            f"CREATE VIRTUAL TABLE {table}_fts USING fts5(terms, content='', "
            f'tokenize="{FTS_TOKENIZER}")',
        ]
    return statements


MIGRATIONS: tuple[Migration, ...] = (tuple(_v1_statements()),)


@dataclass(frozen=True, slots=True)
class Tables:
    records: str
    data: str
    vectors: str
    docs: str
    meta: str
    fts: str

    @property
    def select_records(self) -> str:
        """SELECT of (pk, *columns row_record reads) over `r` (records), `d`, `v`."""
        return (
            "SELECT r.pk, r.id, r.workspace, d.text, d.terms, v.vector, d.doc_ids, "
            f"r.metadata, r.ts, d.attrs FROM {self.records} AS r "
            f"JOIN {self.data} AS d ON d.pk = r.pk JOIN {self.vectors} AS v ON v.pk = r.pk"
        )


def tables(collection: Collection) -> Tables:
    name = f"search_{Collection(collection).value}"
    return Tables(
        records=name,
        data=f"{name}_data",
        vectors=f"{name}_vectors",
        docs=f"{name}_docs",
        meta=f"{name}_meta",
        fts=f"{name}_fts",
    )


def fts_text(terms: Sequence[str]) -> str:
    """The indexed FTS5 column: terms joined by single spaces (one token each)."""
    return " ".join(terms)


def fts_query(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of the terms, each quoted (a `"` is doubled), so no term
    is ever read as query syntax. Duplicates and blank terms are dropped; "" when none."""
    unique = dict.fromkeys(term for term in terms if term.strip())
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in unique)


def encode_vector(vector: Vector, record_id: str) -> Vector:
    """The vector as a normalized 1-D float32 array; a clear error for anything else."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(
            f"record {record_id!r}: vector must be 1-D and non-empty, got {array.shape}"
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"record {record_id!r}: vector contains NaN or infinity")
    return normalized(array)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class RecordRow:
    """A record's values per table (see the module docstring)."""

    record: tuple[object, ...]
    """workspace, id, ts, metadata"""
    data: tuple[object, ...]
    """text, terms, doc_ids, attrs"""
    vector: bytes


def record_row(record: SearchRecord, vector: Vector) -> RecordRow:
    """`vector` is the normalized one from encode_vector."""
    return RecordRow(
        record=(
            record.workspace,
            record.id,
            None if record.timestamp is None else float(record.timestamp),
            _json(dict(record.metadata)),
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
        terms=tuple(json.loads(row[3])),
        vector=np.frombuffer(row[4], dtype="<f4").astype(np.float32, copy=False),
        doc_ids=tuple(json.loads(row[5])),
        metadata=json.loads(row[6]),
        timestamp=row[7],
        attrs=json.loads(row[8]),
    )
