"""The embedded DocumentStore: one row per (workspace, doc_id) in the shared database."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from ragstream.common.models import DocState, DocumentRecord, SearchFilter
from ragstream.common.storage.sqlite.db import Database, Migration
from ragstream.common.storage.sqlite.sql_filters import METADATA_JSON_SQL, filter_where

_COLUMNS = (
    "workspace, doc_id, version, state, content_hash, file_path, metadata, ts, error, "
    "chunk_ids, entity_count, relation_count, created_at, updated_at, processing_ms"
)

MIGRATIONS: tuple[Migration, ...] = (
    (
        "CREATE TABLE documents (workspace TEXT NOT NULL, doc_id TEXT NOT NULL, "
        "version INTEGER NOT NULL, state TEXT NOT NULL, content_hash TEXT NOT NULL, "
        "file_path TEXT NOT NULL, metadata TEXT NOT NULL, ts REAL, error TEXT NOT NULL, "
        "chunk_ids TEXT NOT NULL, entity_count INTEGER NOT NULL, "
        "relation_count INTEGER NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL, "
        "processing_ms REAL NOT NULL, PRIMARY KEY (workspace, doc_id)) WITHOUT ROWID",
        "CREATE INDEX documents_state ON documents (workspace, state, doc_id)",
    ),
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _row(record: DocumentRecord) -> tuple[object, ...]:
    return (
        record.workspace,
        record.doc_id,
        int(record.version),
        DocState(record.state).value,
        record.content_hash,
        record.file_path,
        _json(dict(record.metadata)),
        None if record.timestamp is None else float(record.timestamp),
        record.error,
        _json(list(record.chunk_ids)),
        int(record.entity_count),
        int(record.relation_count),
        float(record.created_at),
        float(record.updated_at),
        float(record.processing_ms),
    )


def _record(row: Sequence[Any]) -> DocumentRecord:
    return DocumentRecord(
        workspace=row[0],
        doc_id=row[1],
        version=row[2],
        state=DocState(row[3]),
        content_hash=row[4],
        file_path=row[5],
        metadata=json.loads(row[6]),
        timestamp=row[7],
        error=row[8],
        chunk_ids=tuple(json.loads(row[9])),
        entity_count=row[10],
        relation_count=row[11],
        created_at=row[12],
        updated_at=row[13],
        processing_ms=row[14],
    )


class SqliteDocumentStore:
    """DocumentStore over one Database; create with `await SqliteDocumentStore.open(db)`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> SqliteDocumentStore:
        await db.migrate("documents", MIGRATIONS)
        return cls(db)

    async def close(self) -> None:
        """Nothing to release: the Database's owner closes it."""

    async def get(self, workspace: str, doc_id: str) -> DocumentRecord | None:
        found = await self.get_many(workspace, [doc_id])
        return found[0] if found else None

    async def get_many(self, workspace: str, doc_ids: Sequence[str]) -> list[DocumentRecord]:
        if not doc_ids:
            return []

        def read(conn: sqlite3.Connection) -> list[DocumentRecord]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM documents WHERE workspace = ? "
                "AND doc_id IN (SELECT value FROM json_each(?))",
                (workspace, _json(list(doc_ids))),
            ).fetchall()
            found = {row[1]: _record(row) for row in rows}
            return [found[d] for d in dict.fromkeys(doc_ids) if d in found]

        return await self._db.read(read)

    async def put(self, record: DocumentRecord) -> None:
        values = _row(record)
        placeholders = ", ".join("?" * len(values))

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                f"INSERT OR REPLACE INTO documents ({_COLUMNS}) VALUES ({placeholders})", values
            )

        await self._db.write(write)

    async def list(
        self, workspace: str, state: DocState | None, limit: int, after: str = ""
    ) -> list[DocumentRecord]:
        if limit <= 0:
            return []
        sql = f"SELECT {_COLUMNS} FROM documents WHERE workspace = ? AND doc_id > ?"
        params: list[object] = [workspace, after]
        if state is not None:
            sql += " AND state = ?"
            params.append(DocState(state).value)
        sql += " ORDER BY doc_id LIMIT ?"
        params.append(limit)

        def read(conn: sqlite3.Connection) -> list[DocumentRecord]:
            return [_record(row) for row in conn.execute(sql, params)]

        return await self._db.read(read)

    async def matching(self, workspace: str, search_filter: SearchFilter) -> set[str]:
        where = filter_where(
            search_filter,
            metadata_sql=METADATA_JSON_SQL.format(column="metadata"),
            timestamp_col="ts",
            doc_ids_sql="doc_id IN (SELECT value FROM json_each(?))",
        )
        sql = f"SELECT doc_id FROM documents WHERE workspace = ? AND state != ? AND ({where.sql})"
        params = (workspace, DocState.DELETED.value, *where.params)

        def read(conn: sqlite3.Connection) -> set[str]:
            return {doc_id for (doc_id,) in conn.execute(sql, params)}

        return await self._db.read(read)
