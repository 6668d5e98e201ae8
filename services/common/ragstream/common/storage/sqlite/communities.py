"""The embedded community store: one row per community, and a member index for the
entity -> communities lookup."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from ragstream.common.communities import CommunityRecord, report_fields, report_of
from ragstream.common.storage.sqlite.db import Database, Migration

MIGRATIONS: tuple[Migration, ...] = (
    (
        "CREATE TABLE communities (workspace TEXT NOT NULL, id TEXT NOT NULL, "
        "level INTEGER NOT NULL, parent TEXT NOT NULL, members TEXT NOT NULL, "
        "report TEXT, PRIMARY KEY (workspace, id)) WITHOUT ROWID",
        "CREATE TABLE community_members (workspace TEXT NOT NULL, key TEXT NOT NULL, "
        "level INTEGER NOT NULL, id TEXT NOT NULL, PRIMARY KEY (workspace, key, level, id)) "
        "WITHOUT ROWID",
        "CREATE INDEX community_members_id ON community_members (workspace, id)",
    ),
)
_COLUMNS = "workspace, id, level, parent, members, report"


def _row(c: CommunityRecord) -> tuple[object, ...]:
    report = report_fields(c.report)
    return (
        c.workspace, c.id, c.level, c.parent, json.dumps(list(c.members), ensure_ascii=False),
        None if report is None else json.dumps(report, ensure_ascii=False),
    )  # fmt: skip


def _record(row: Sequence[object]) -> CommunityRecord:
    workspace, id_, level, parent, members, report = row
    return CommunityRecord(
        str(workspace), str(id_), int(str(level)), str(parent),
        tuple(json.loads(str(members))), report_of(json.loads(str(report)) if report else None),
    )  # fmt: skip


def _ids(values: Sequence[str]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


class SqliteCommunityStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    async def open(cls, db: Database) -> SqliteCommunityStore:
        await db.migrate("communities", MIGRATIONS)
        return cls(db)

    async def close(self) -> None:
        """Nothing to release: the Database's owner closes it."""

    async def apply(
        self, workspace: str, upserts: Sequence[CommunityRecord], deletes: Sequence[str]
    ) -> None:
        if any(c.workspace != workspace for c in upserts):
            raise ValueError("every community must belong to the given workspace")
        replaced = _ids([*deletes, *(c.id for c in upserts)])
        members = [(workspace, key, c.level, c.id) for c in upserts for key in c.members]

        def write(conn: sqlite3.Connection) -> None:
            for table in ("communities", "community_members"):
                conn.execute(
                    f"DELETE FROM {table} WHERE workspace = ? "
                    "AND id IN (SELECT value FROM json_each(?))",
                    (workspace, replaced),
                )
            conn.executemany(
                f"INSERT INTO communities ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                [_row(c) for c in upserts],
            )
            conn.executemany("INSERT OR IGNORE INTO community_members VALUES (?, ?, ?, ?)", members)

        await self._db.write(write)

    async def get(self, workspace: str, ids: Sequence[str]) -> list[CommunityRecord]:
        def read(conn: sqlite3.Connection) -> list[CommunityRecord]:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM communities WHERE workspace = ? "
                "AND id IN (SELECT value FROM json_each(?))",
                (workspace, _ids(ids)),
            )
            found = {row[1]: _record(row) for row in rows}
            return [found[i] for i in dict.fromkeys(ids) if i in found]

        return await self._db.read(read) if ids else []

    async def of_entities(self, workspace: str, keys: Sequence[str]) -> dict[str, list[str]]:
        def read(conn: sqlite3.Connection) -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            rows = conn.execute(
                "SELECT key, id FROM community_members WHERE workspace = ? "
                "AND key IN (SELECT value FROM json_each(?)) ORDER BY key, level, id",
                (workspace, _ids(keys)),
            )
            for key, id_ in rows:
                found.setdefault(key, []).append(id_)
            return found

        return await self._db.read(read) if keys else {}

    async def list(self, workspace: str, level: int | None = None) -> list[CommunityRecord]:
        def read(conn: sqlite3.Connection) -> list[CommunityRecord]:
            where, params = "workspace = ?", [workspace]
            if level is not None:
                where, params = where + " AND level = ?", [workspace, str(level)]
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM communities WHERE {where} ORDER BY level, id", params
            )
            return [_record(row) for row in rows]

        return await self._db.read(read)
