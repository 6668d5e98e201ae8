"""The embedded GraphStore: nodes and undirected edges in two tables of the shared database.

An edge is one row keyed by its sorted endpoint pair, so (a, b) and (b, a) are the same row.
The primary key (workspace, source, target) serves lookups by source; a second index on
(workspace, target, source) serves lookups by target, so "every edge touching these keys"
is two index range scans in one statement, for a whole batch of keys.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ragstream.common import json_text
from ragstream.common.models import GraphEdge, GraphNode, GraphStats
from ragstream.common.storage.edges import by_endpoint
from ragstream.common.storage.sqlite.db import Database, Migration
from ragstream.common.storage.sqlite.generations import GenerationalCache
from ragstream.common.storage.sqlite.graph_cache import GraphCache, Pair

MIGRATIONS: tuple[Migration, ...] = (
    (
        "CREATE TABLE graph_nodes (workspace TEXT NOT NULL, key TEXT NOT NULL, "
        "name TEXT NOT NULL, type TEXT NOT NULL, description TEXT NOT NULL, "
        "source_ids TEXT NOT NULL, doc_ids TEXT NOT NULL, PRIMARY KEY (workspace, key)) "
        "WITHOUT ROWID",
        "CREATE TABLE graph_edges (workspace TEXT NOT NULL, source TEXT NOT NULL, "
        "target TEXT NOT NULL, keywords TEXT NOT NULL, description TEXT NOT NULL, "
        "weight REAL NOT NULL, source_ids TEXT NOT NULL, doc_ids TEXT NOT NULL, "
        "CHECK (source <= target), PRIMARY KEY (workspace, source, target)) WITHOUT ROWID",
        "CREATE INDEX graph_edges_target ON graph_edges (workspace, target, source)",
    ),
    (
        # Moved on by every write to a workspace's graph: the generation of graph_cache.py.
        "CREATE TABLE graph_state (workspace TEXT PRIMARY KEY, generation INTEGER NOT NULL) "
        "WITHOUT ROWID",
    ),
)
_BUMP = (
    "INSERT INTO graph_state (workspace, generation) VALUES (?, 1) "
    "ON CONFLICT (workspace) DO UPDATE SET generation = generation + 1"
)
_GENERATION = "SELECT generation FROM graph_state WHERE workspace = ?"

K = TypeVar("K", str, Pair)
V = TypeVar("V")
Load = Callable[[sqlite3.Connection, list[K]], dict[K, V]]

_NODE_COLUMNS = "key, name, type, description, source_ids, doc_ids"
_EDGE_COLUMNS = "source, target, keywords, description, weight, source_ids, doc_ids"
_EDGE_SELECT = ", ".join(f"e.{column}" for column in _EDGE_COLUMNS.split(", "))

MAX_BATCH = 16_000
"""Keys bound in one statement (SQLite allows 32766 parameters; a pair takes two). Lists
travel as bound parameters, not as one JSON text, because SQLite's JSON functions cut a
string at its first NUL character and keys may contain any character."""


def _keys_sql(count: int) -> str:
    """Placeholders ?2.. for `count` keys (?1 is the workspace); reused by both UNION arms."""
    return ", ".join(f"?{i}" for i in range(2, count + 2))


def _edges_touching(count: int) -> str:
    # An edge found from its source is not looked for from its target, so the two arms never
    # return the same row (a self-loop's ends are one key): UNION ALL, with no temporary
    # b-tree comparing whole rows, descriptions and all, to drop copies. The target arm
    # names its index: without statistics the planner reads `workspace = ?` as a few rows
    # and scans the workspace's whole primary-key range instead (25 ms at 100,000 edges,
    # against 0.03 ms).
    keys = _keys_sql(count)
    return (
        f"SELECT {_EDGE_COLUMNS} FROM graph_edges WHERE workspace = ?1 AND source IN ({keys}) "
        f"UNION ALL SELECT {_EDGE_COLUMNS} FROM graph_edges INDEXED BY graph_edges_target "
        f"WHERE workspace = ?1 AND target IN ({keys}) AND source NOT IN ({keys})"
    )


def _edges_between(count: int) -> str:
    """The edges of `count` (source, target) pairs bound as ?2, ?3, ...: the pairs drive, one
    primary-key lookup each. `(source, target) IN (VALUES ...)` scanned the workspace's whole
    primary-key range instead (25 ms at 100,000 edges, against 0.06 ms)."""
    values = ", ".join(f"(?{2 * i + 2}, ?{2 * i + 3})" for i in range(count))
    return (
        f"SELECT {_EDGE_SELECT} FROM (VALUES {values}) AS w CROSS JOIN graph_edges AS e "
        "ON e.workspace = ?1 AND e.source = w.column1 AND e.target = w.column2"
    )


def _degrees(count: int) -> str:
    # One row per (requested key, edge end): an edge counts once for each requested end, a
    # self-loop once (its target arm is left out). Rows are unique by the primary key, so
    # UNION ALL counts them without a temporary b-tree to drop copies.
    keys = _keys_sql(count)
    return (
        "SELECT k, count(*) FROM (SELECT source AS k FROM graph_edges "
        f"WHERE workspace = ?1 AND source IN ({keys}) UNION ALL SELECT target "
        f"FROM graph_edges WHERE workspace = ?1 AND target IN ({keys}) AND source <> target) "
        "GROUP BY k"
    )


def _edges_among(first: int, second: int) -> str:
    """Edges from one batch of keys (?2..) to another (after it); the same batch twice
    finds every edge among one batch. `+target` keeps the planner from probing the primary
    key with every (source, target) combination: it range-scans each source's edges and
    tests the target against the list."""
    sources = _keys_sql(first)
    targets = ", ".join(f"?{i}" for i in range(first + 2, first + second + 2))
    return (
        f"SELECT {_EDGE_COLUMNS} FROM graph_edges WHERE workspace = ?1 "
        f"AND source IN ({sources}) AND +target IN ({targets})"
    )


_TOP_BY_DEGREE = (
    # One row per (node, other end), so a self-loop counts once (as in _degrees).
    "SELECT n.key, count(*) AS degree FROM graph_nodes AS n JOIN (SELECT source AS k, "
    "target AS o FROM graph_edges WHERE workspace = ?1 UNION SELECT target, source "
    "FROM graph_edges WHERE workspace = ?1) AS e ON e.k = n.key WHERE n.workspace = ?1 "
    "GROUP BY n.key ORDER BY degree DESC, n.key LIMIT ?2"
)


def _batches(keys: Sequence[str]) -> list[list[str]]:
    unique = list(dict.fromkeys(keys))
    return [unique[i : i + MAX_BATCH] for i in range(0, len(unique), MAX_BATCH)]


def _generation(conn: sqlite3.Connection, workspace: str) -> int:
    row = conn.execute(_GENERATION, (workspace,)).fetchone()
    return int(row[0]) if row else 0


def _json(values: Iterable[str]) -> str:
    return json_text.dumps(list(values))


def canonical(edge: GraphEdge) -> GraphEdge:
    """The edge with source <= target (the stored orientation)."""
    if edge.source <= edge.target:
        return edge
    return replace(edge, source=edge.target, target=edge.source)


def _node(row: Sequence[Any]) -> GraphNode:
    return GraphNode(
        key=row[0],
        name=row[1],
        type=row[2],
        description=row[3],
        source_ids=tuple(json_text.loads(row[4])),
        doc_ids=tuple(json_text.loads(row[5])),
    )


def _edge(row: Sequence[Any]) -> GraphEdge:
    return GraphEdge(
        source=row[0],
        target=row[1],
        keywords=row[2],
        description=row[3],
        weight=float(row[4]),
        source_ids=tuple(json_text.loads(row[5])),
        doc_ids=tuple(json_text.loads(row[6])),
    )


class SqliteGraphStore:
    """GraphStore over one Database; create with `await SqliteGraphStore.open(db)`."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._cache = GraphCache()

    @classmethod
    async def open(cls, db: Database) -> SqliteGraphStore:
        await db.migrate("graph", MIGRATIONS)
        return cls(db)

    async def close(self) -> None:
        """Nothing to release: the Database is closed by its owner."""

    # -- writes ---------------------------------------------------------------------------

    async def upsert_nodes(self, workspace: str, nodes: Sequence[GraphNode]) -> None:
        if not nodes:
            return
        rows = [
            (
                workspace,
                n.key,
                n.name,
                n.type,
                n.description,
                _json(n.source_ids),
                _json(n.doc_ids),
            )
            for n in nodes
        ]

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                f"INSERT OR REPLACE INTO graph_nodes (workspace, {_NODE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute(_BUMP, (workspace,))

        await self._db.write(write)

    async def upsert_edges(self, workspace: str, edges: Sequence[GraphEdge]) -> None:
        if not edges:
            return
        rows = [
            (
                workspace,
                e.source,
                e.target,
                e.keywords,
                e.description,
                float(e.weight),
                _json(e.source_ids),
                _json(e.doc_ids),
            )
            for e in map(canonical, edges)
        ]

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                f"INSERT OR REPLACE INTO graph_edges (workspace, {_EDGE_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute(_BUMP, (workspace,))

        await self._db.write(write)

    async def delete_nodes(self, workspace: str, keys: Sequence[str]) -> None:
        if not keys:
            return
        batches = _batches(keys)

        def write(conn: sqlite3.Connection) -> None:
            for batch in batches:
                where = f"workspace = ?1 AND {{column}} IN ({_keys_sql(len(batch))})"
                params = (workspace, *batch)
                for table, column in (("nodes", "key"), ("edges", "source"), ("edges", "target")):
                    conn.execute(
                        f"DELETE FROM graph_{table} WHERE {where.format(column=column)}", params
                    )
            conn.execute(_BUMP, (workspace,))

        await self._db.write(write)

    async def delete_edges(self, workspace: str, pairs: Sequence[tuple[str, str]]) -> None:
        if not pairs:
            return
        rows = [(workspace, *sorted(pair)) for pair in pairs]

        def write(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "DELETE FROM graph_edges WHERE workspace = ? AND source = ? AND target = ?", rows
            )
            conn.execute(_BUMP, (workspace,))

        await self._db.write(write)

    # -- reads ----------------------------------------------------------------------------

    async def get_nodes(self, workspace: str, keys: Sequence[str]) -> list[GraphNode]:
        unique = list(dict.fromkeys(keys))

        def load(conn: sqlite3.Connection, wanted: list[str]) -> dict[str, tuple[GraphNode, ...]]:
            found: dict[str, tuple[GraphNode, ...]] = dict.fromkeys(wanted, ())
            for batch in _batches(wanted):
                sql = (
                    f"SELECT {_NODE_COLUMNS} FROM graph_nodes "
                    f"WHERE workspace = ?1 AND key IN ({_keys_sql(len(batch))})"
                )
                found.update(
                    (row[0], (_node(row),)) for row in conn.execute(sql, (workspace, *batch))
                )
            return found

        found = await self._through(self._cache.nodes, workspace, unique, load)
        return [node for key in unique for node in found[key]]

    async def get_edges(self, workspace: str, pairs: Sequence[tuple[str, str]]) -> list[GraphEdge]:
        wanted = list(dict.fromkeys((min(pair), max(pair)) for pair in pairs))

        def load(
            conn: sqlite3.Connection, missing: list[Pair]
        ) -> dict[Pair, tuple[GraphEdge, ...]]:
            found: dict[Pair, tuple[GraphEdge, ...]] = dict.fromkeys(missing, ())
            for i in range(0, len(missing), MAX_BATCH // 2):
                batch = missing[i : i + MAX_BATCH // 2]
                sql = _edges_between(len(batch))
                params = (workspace, *(key for pair in batch for key in pair))
                found.update(((row[0], row[1]), (_edge(row),)) for row in conn.execute(sql, params))
            return found

        found = await self._through(self._cache.pairs, workspace, wanted, load)
        return [edge for pair in wanted for edge in found[pair]]

    async def edges_of(self, workspace: str, keys: Sequence[str]) -> dict[str, list[GraphEdge]]:
        unique = list(dict.fromkeys(keys))

        def load(conn: sqlite3.Connection, wanted: list[str]) -> dict[str, tuple[GraphEdge, ...]]:
            found: dict[Pair, GraphEdge] = {}
            for batch in _batches(wanted):
                rows = conn.execute(_edges_touching(len(batch)), (workspace, *batch))
                found.update(((row[0], row[1]), _edge(row)) for row in rows)
            return {key: tuple(edges) for key, edges in by_endpoint(found, wanted).items()}

        found = await self._through(self._cache.edges_of, workspace, unique, load)
        return {key: list(found[key]) for key in unique}

    async def degrees(self, workspace: str, keys: Sequence[str]) -> dict[str, int]:
        unique = list(dict.fromkeys(keys))

        def load(conn: sqlite3.Connection, wanted: list[str]) -> dict[str, int]:
            counts = dict.fromkeys(wanted, 0)
            for batch in _batches(wanted):
                rows = conn.execute(_degrees(len(batch)), (workspace, *batch))
                counts.update((str(k), int(n)) for k, n in rows)
            return counts

        return await self._through(self._cache.degrees, workspace, unique, load)

    async def _through(
        self,
        cache: GenerationalCache[K, V],
        workspace: str,
        keys: list[K],
        load: Load[K, V],
    ) -> dict[K, V]:
        """The answers for `keys` at the generation of one snapshot: from `cache`, else
        from `load` with the snapshot's connection."""

        def read(conn: sqlite3.Connection) -> dict[K, V]:
            generation = _generation(conn, workspace)
            return cache.through(workspace, generation, keys, lambda missing: load(conn, missing))

        return await self._db.read(read) if keys else {}

    async def edges_among(self, workspace: str, keys: Sequence[str]) -> list[GraphEdge]:
        # Half a batch per side: both sides' keys are bound in one statement.
        unique = list(dict.fromkeys(keys))
        half = MAX_BATCH // 2
        batches = [unique[i : i + half] for i in range(0, len(unique), half)]

        def read(conn: sqlite3.Connection) -> dict[tuple[str, str], GraphEdge]:
            found: dict[tuple[str, str], GraphEdge] = {}
            for sources in batches:
                for targets in batches:
                    sql = _edges_among(len(sources), len(targets))
                    rows = conn.execute(sql, (workspace, *sources, *targets))
                    found.update(((row[0], row[1]), _edge(row)) for row in rows)
            return found

        found = await self._db.read(read) if batches else {}
        return [found[pair] for pair in sorted(found)]

    async def stats(self, workspace: str, top: int) -> GraphStats:
        def read(conn: sqlite3.Connection) -> GraphStats:
            count = "SELECT count(*) FROM graph_{} WHERE workspace = ?"
            [nodes] = conn.execute(count.format("nodes"), (workspace,)).fetchone()
            [edges] = conn.execute(count.format("edges"), (workspace,)).fetchone()
            rows = conn.execute(_TOP_BY_DEGREE, (workspace, top)) if top > 0 else []
            ranked = tuple((str(key), int(degree)) for key, degree in rows)
            return GraphStats(int(nodes), int(edges), ranked)

        return await self._db.read(read)
