"""nGQL statements of the graph store: pure functions from records to statement text.

Values cannot be bound as parameters here: NebulaGraph rejects parameters as VIDs (GO,
FETCH, DELETE) and in INSERT values. So every value is written as a literal made by
`literals` (text by `quote`, the one escaping function; numbers by `number`); the rest of
each statement is fixed text and schema names.

Each builder returns a list of statements: as many rows or keys as fit in one (at most
`MAX_KEYS` keys or `MAX_ROWS` rows, and `MAX_BYTES` of text), so a batch of a few hundred
entities is always one statement, and a very large one is a few, never one per entity.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.storage.nebula.literals import number, quote, vid
from ragstream.common.storage.nebula.schema import EDGE, EDGE_PROPS, RANK, TAG, TAG_PROPS

MAX_KEYS = 1000
"""VIDs in one read or delete statement."""
MAX_ROWS = 256
"""Rows in one INSERT."""
MAX_BYTES = 1_000_000
"""Statement size cap, well under graphd's max_allowed_query_size (4 MiB by default)."""


def edge_ref(workspace: str, a: str, b: str) -> str:
    """`"src"->"dst"@0` for the one edge of the unordered pair (a, b)."""
    first, second = sorted((a, b))
    return f"{quote(vid(workspace, first))}->{quote(vid(workspace, second))}@{RANK}"


def _json(values: Iterable[str]) -> str:
    return quote(json.dumps(list(values), ensure_ascii=False))


def pack(head: str, items: Sequence[str], tail: str = "", *, max_items: int) -> list[str]:
    """Statements `head item, item, ... tail`, each within max_items and MAX_BYTES."""
    statements: list[str] = []
    batch: list[str] = []
    size = len(head) + len(tail)
    for item in items:
        item_size = len(item.encode("utf-8")) + 2
        if batch and (len(batch) == max_items or size + item_size > MAX_BYTES):
            statements.append(f"{head}{', '.join(batch)}{tail}")
            batch, size = [], len(head) + len(tail)
        batch.append(item)
        size += item_size
    if batch:
        statements.append(f"{head}{', '.join(batch)}{tail}")
    return statements


def _vids(workspace: str, keys: Sequence[str]) -> list[str]:
    return [quote(vid(workspace, key)) for key in dict.fromkeys(keys)]


def _pairs(workspace: str, pairs: Sequence[tuple[str, str]]) -> list[str]:
    unique = dict.fromkeys((min(a, b), max(a, b)) for a, b in pairs)
    return [edge_ref(workspace, a, b) for a, b in unique]


# -- writes -----------------------------------------------------------------------------


def insert_nodes(workspace: str, nodes: Sequence[GraphNode]) -> list[str]:
    """Plain INSERT overwrites a vertex's properties: an upsert by key (the last copy of
    a key in the batch wins)."""
    latest = {n.key: n for n in nodes}
    rows = [
        f"{quote(vid(workspace, n.key))}:({quote(workspace)}, {quote(n.key)}, {quote(n.name)}, "
        f"{quote(n.type)}, {quote(n.description)}, {_json(n.source_ids)}, {_json(n.doc_ids)})"
        for n in latest.values()
    ]
    head = f"INSERT VERTEX {TAG}({', '.join(TAG_PROPS)}) VALUES "
    return pack(head, rows, max_items=MAX_ROWS)


def insert_edges(workspace: str, edges: Sequence[GraphEdge]) -> list[str]:
    """One edge per unordered pair: from the smaller key's VID to the larger's, rank 0."""
    latest = {(min(e.source, e.target), max(e.source, e.target)): e for e in edges}
    rows = [
        f"{edge_ref(workspace, a, b)}:({quote(workspace)}, {quote(a)}, {quote(b)}, "
        f"{number(e.weight)}, {quote(e.keywords)}, {quote(e.description)}, "
        f"{_json(e.source_ids)}, {_json(e.doc_ids)})"
        for (a, b), e in latest.items()
    ]
    head = f"INSERT EDGE {EDGE}({', '.join(EDGE_PROPS)}) VALUES "
    return pack(head, rows, max_items=MAX_ROWS)


def delete_vertices(workspace: str, keys: Sequence[str]) -> list[str]:
    """WITH EDGE also deletes every edge touching the vertices, in both directions."""
    return pack("DELETE VERTEX ", _vids(workspace, keys), " WITH EDGE", max_items=MAX_KEYS)


def delete_edges(workspace: str, pairs: Sequence[tuple[str, str]]) -> list[str]:
    return pack(f"DELETE EDGE {EDGE} ", _pairs(workspace, pairs), max_items=MAX_KEYS)


# -- reads ------------------------------------------------------------------------------


def fetch_nodes(workspace: str, keys: Sequence[str]) -> list[str]:
    return pack(
        f"FETCH PROP ON {TAG} ", _vids(workspace, keys), " YIELD vertex AS v", max_items=MAX_KEYS
    )


def fetch_edges(workspace: str, pairs: Sequence[tuple[str, str]]) -> list[str]:
    return pack(
        f"FETCH PROP ON {EDGE} ", _pairs(workspace, pairs), " YIELD edge AS e", max_items=MAX_KEYS
    )


def edges_of(workspace: str, keys: Sequence[str]) -> list[str]:
    """Every edge touching any of the keys (an edge between two of them comes twice)."""
    return pack(
        "GO FROM ",
        _vids(workspace, keys),
        f" OVER {EDGE} BIDIRECT YIELD edge AS e",
        max_items=MAX_KEYS,
    )


def degrees(workspace: str, keys: Sequence[str]) -> list[str]:
    """(vid, degree) rows for the keys that have edges.

    BIDIRECT meets a self-loop twice from its vertex (as out- and as in-edge); DISTINCT
    over (start, src, dst) counts it once, as the other backends do."""
    return pack(
        "GO FROM ",
        _vids(workspace, keys),
        f" OVER {EDGE} BIDIRECT YIELD DISTINCT id($^) AS vid, src(edge) AS s, dst(edge) AS d"
        " | GROUP BY $-.vid YIELD $-.vid AS vid, count(*) AS degree",
        max_items=MAX_KEYS,
    )


def edges_among(workspace: str, keys: Sequence[str]) -> list[str]:
    """Every edge with both ends among the keys, once: from each key, its out-edges (the
    stored direction, smaller key to larger) that end at one of the keys."""
    vids = _vids(workspace, keys)
    tail = f" OVER {EDGE} WHERE dst(edge) IN [{', '.join(vids)}] YIELD edge AS e"
    return pack("GO FROM ", vids, tail, max_items=MAX_KEYS)


# -- workspace scans (through the indexes on `workspace`, see schema.INDEXES) --------------


def _lookup(schema: str, workspace: str, yields: str) -> str:
    return f"LOOKUP ON {schema} WHERE {schema}.workspace == {quote(workspace)} YIELD {yields}"


def count_nodes(workspace: str) -> str:
    """One row, column n: the workspace's vertices."""
    return f"{_lookup(TAG, workspace, 'id(vertex) AS vid')} | YIELD count(*) AS n"


def count_edges(workspace: str) -> str:
    """One row, column n: the workspace's edges."""
    return f"{_lookup(EDGE, workspace, 'src(edge) AS s')} | YIELD count(*) AS n"


def top_by_degree(workspace: str, top: int) -> str:
    """(entity_key, degree) rows of the `top` vertices with the most edges, ties by key.

    Each vertex's edges are counted as in `degrees` (DISTINCT: a self-loop once); vertices
    without edges give no row."""
    vertices = _lookup(TAG, workspace, "id(vertex) AS vid, properties(vertex).entity_key AS k")
    return (
        f"{vertices} | GO FROM $-.vid OVER {EDGE} BIDIRECT"
        " YIELD DISTINCT $-.k AS entity_key, src(edge) AS s, dst(edge) AS d"
        " | GROUP BY $-.entity_key YIELD $-.entity_key AS entity_key, count(*) AS degree"
        f" | ORDER BY $-.degree DESC, $-.entity_key | LIMIT {int(top)}"
    )
