"""Tables of the embedded search store, and SearchRecord <-> row conversion.

Per collection: `search_<c>` (one row per record, every SearchRecord field), `search_<c>_docs`
(doc id -> record, for doc id filters) and `search_<c>_fts` (FTS5 over the BM25 terms).
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

RECORD_COLUMNS = "id, workspace, text, terms, vector, doc_ids, metadata, ts, attrs"

_V1_COLLECTIONS = ("chunks", "entities", "relations")
"""Fixed here, not derived from Collection: a new collection needs a new migration step."""


def _v1_statements() -> list[str]:
    statements = [
        "CREATE TABLE search_state (collection TEXT NOT NULL, workspace TEXT NOT NULL, "
        "dim INTEGER, generation INTEGER NOT NULL, PRIMARY KEY (collection, workspace)) "
        "WITHOUT ROWID"
    ]
    for name in _V1_COLLECTIONS:
        statements += [
            f"CREATE TABLE search_{name} (pk INTEGER PRIMARY KEY, workspace TEXT NOT NULL, "
            "id TEXT NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL, vector BLOB NOT NULL, "
            "doc_ids TEXT NOT NULL, metadata TEXT NOT NULL, ts REAL, attrs TEXT NOT NULL, "
            "UNIQUE (workspace, id))",
            f"CREATE TABLE search_{name}_docs (doc_id TEXT NOT NULL, pk INTEGER NOT NULL "
            f"REFERENCES search_{name}(pk) ON DELETE CASCADE, PRIMARY KEY (doc_id, pk)) "
            "WITHOUT ROWID",
            f"CREATE INDEX search_{name}_docs_pk ON search_{name}_docs (pk)",
            f"CREATE VIRTUAL TABLE search_{name}_fts USING fts5(terms, content='', "
            f'tokenize="{FTS_TOKENIZER}")',
        ]
    return statements


MIGRATIONS: tuple[Migration, ...] = (tuple(_v1_statements()),)


@dataclass(frozen=True, slots=True)
class Tables:
    records: str
    docs: str
    fts: str


def tables(collection: Collection) -> Tables:
    name = f"search_{Collection(collection).value}"
    return Tables(records=name, docs=f"{name}_docs", fts=f"{name}_fts")


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


def record_row(record: SearchRecord, vector: Vector) -> tuple[object, ...]:
    """Values for RECORD_COLUMNS; `vector` is the normalized one from encode_vector."""
    return (
        record.id,
        record.workspace,
        record.text,
        _json(list(record.terms)),
        vector.astype("<f4").tobytes(),
        _json(list(record.doc_ids)),
        _json(dict(record.metadata)),
        None if record.timestamp is None else float(record.timestamp),
        _json(dict(record.attrs)),
    )


def row_record(row: Sequence[Any]) -> SearchRecord:
    """The inverse of record_row, for a row selected as RECORD_COLUMNS."""
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
