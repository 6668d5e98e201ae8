"""The embedded mentions ledger and LLM cache."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence

from ragstream.common import json_text
from ragstream.common.models import Mention, MentionKind
from ragstream.common.storage.sqlite.db import Database, Migration

MENTION_MIGRATIONS: tuple[Migration, ...] = (
    (
        "CREATE TABLE mentions (workspace TEXT NOT NULL, chunk_id TEXT NOT NULL, "
        "key TEXT NOT NULL, kind TEXT NOT NULL, doc_id TEXT NOT NULL, name TEXT NOT NULL, "
        "source TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL, "
        "description TEXT NOT NULL, keywords TEXT NOT NULL, weight REAL NOT NULL, "
        "file_path TEXT NOT NULL, PRIMARY KEY (workspace, chunk_id, key)) WITHOUT ROWID",
        "CREATE INDEX mentions_key ON mentions (workspace, key, chunk_id)",
    ),
)
CACHE_MIGRATIONS: tuple[Migration, ...] = (
    (
        "CREATE TABLE llm_cache (key TEXT PRIMARY KEY, value TEXT NOT NULL, "
        "created_at REAL NOT NULL) WITHOUT ROWID",
    ),
)
_COLUMNS = (
    "workspace, chunk_id, key, kind, doc_id, name, source, target, type, description, "
    "keywords, weight, file_path"
)


_KINDS = {kind.value: kind for kind in MentionKind}
"""Kind name -> MentionKind by a dict lookup: calling the enum for each row was most of the
time stage 2 spent reading mentions. An unknown name still gets the enum's ValueError."""


def _kind(name: str) -> MentionKind:
    return _KINDS.get(name) or MentionKind(name)


def _row(m: Mention) -> tuple[object, ...]:
    return (
        m.workspace, m.chunk_id, m.key, _kind(m.kind).value, m.doc_id, m.name,
        m.source, m.target, m.type, m.description, m.keywords, float(m.weight), m.file_path,
    )  # fmt: skip


def _mention(row: Sequence[object]) -> Mention:
    workspace, chunk_id, key, kind, doc_id, name, source, target, type_, desc, kw, weight, path = (
        row
    )
    return Mention(
        workspace=str(workspace), chunk_id=str(chunk_id), doc_id=str(doc_id),
        kind=_kind(str(kind)), key=str(key), name=str(name), source=str(source),
        target=str(target), type=str(type_), description=str(desc), keywords=str(kw),
        weight=float(weight), file_path=str(path),  # type: ignore[arg-type]
    )  # fmt: skip


def _ids(values: Sequence[str]) -> str:
    return json_text.dumps(list(values))


class SqliteMentionStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> SqliteMentionStore:
        await db.migrate("mentions", MENTION_MIGRATIONS)
        return cls(db)

    async def close(self) -> None:
        """Nothing to release: the Database's owner closes it."""

    async def replace_chunk_mentions(
        self, workspace: str, chunk_id: str, mentions: Sequence[Mention]
    ) -> None:
        await self.replace_mentions(workspace, {chunk_id: mentions})

    async def replace_mentions(
        self, workspace: str, by_chunk: Mapping[str, Sequence[Mention]]
    ) -> None:
        for chunk_id, mentions in by_chunk.items():
            if any(m.workspace != workspace or m.chunk_id != chunk_id for m in mentions):
                raise ValueError("every mention must belong to the given workspace and chunk")
        # One mention per (chunk, key): a later duplicate in the list wins.
        rows = [r for ms in by_chunk.values() for r in {m.key: _row(m) for m in ms}.values()]
        placeholders = ", ".join("?" * len(_COLUMNS.split(",")))

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM mentions WHERE workspace = ? AND chunk_id IN "
                "(SELECT value FROM json_each(?))",
                (workspace, _ids(list(by_chunk))),
            )
            conn.executemany(f"INSERT INTO mentions ({_COLUMNS}) VALUES ({placeholders})", rows)

        await self._db.write(write)

    async def delete_chunks(self, workspace: str, chunk_ids: Sequence[str]) -> set[str]:
        if not chunk_ids:
            return set()

        def write(conn: sqlite3.Connection) -> set[str]:
            where = "workspace = ? AND chunk_id IN (SELECT value FROM json_each(?))"
            params = (workspace, _ids(chunk_ids))
            keys = {
                row[0] for row in conn.execute(f"SELECT key FROM mentions WHERE {where}", params)
            }
            conn.execute(f"DELETE FROM mentions WHERE {where}", params)
            return keys

        return await self._db.write(write)

    async def keys_of_chunks(self, workspace: str, chunk_ids: Sequence[str]) -> set[str]:
        if not chunk_ids:
            return set()

        def read(conn: sqlite3.Connection) -> set[str]:
            rows = conn.execute(
                "SELECT key FROM mentions WHERE workspace = ? "
                "AND chunk_id IN (SELECT value FROM json_each(?))",
                (workspace, _ids(chunk_ids)),
            )
            return {row[0] for row in rows}

        return await self._db.read(read)

    async def mentions_of(self, workspace: str, keys: Sequence[str]) -> dict[str, list[Mention]]:
        if not keys:
            return {}

        def read(conn: sqlite3.Connection) -> dict[str, list[Mention]]:
            found: dict[str, list[Mention]] = {}
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM mentions WHERE workspace = ? "
                "AND key IN (SELECT value FROM json_each(?)) ORDER BY key, chunk_id",
                (workspace, _ids(keys)),
            )
            for row in rows:
                found.setdefault(row[2], []).append(_mention(row))
            return found

        return await self._db.read(read)


class SqliteCacheStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> SqliteCacheStore:
        await db.migrate("llm_cache", CACHE_MIGRATIONS)
        return cls(db)

    async def close(self) -> None:
        """Nothing to release: the Database's owner closes it."""

    async def get(self, key: str) -> str | None:
        def read(conn: sqlite3.Connection) -> str | None:
            row = conn.execute("SELECT value FROM llm_cache WHERE key = ?", (key,)).fetchone()
            return None if row is None else str(row[0])

        return await self._db.read(read)

    async def put(self, key: str, value: str) -> None:
        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO llm_cache (key, value, created_at) VALUES (?, ?, ?)",
                (key, value, time.time()),
            )

        await self._db.write(write)
