"""Reads of the NebulaGraph test double: FETCH, GO, LOOKUP and the pipe stages after them.

Semantics modelled (NebulaGraph 3.x): GO ... BIDIRECT returns an in-edge reversed (src = the
start vertex, negative type), while src(edge)/dst(edge) give the stored direction; GO
without BIDIRECT follows out-edges only; LOOKUP needs a usable index on the property it
filters by and misses what was written before that index existed until it is rebuilt;
`$-.<column>` reads the previous stage's row; GROUP BY, YIELD count(*), ORDER BY and LIMIT
work on the rows of the stage before them. Row order is the double's storage order, which
the store must not rely on (graphd gives none either).
"""

from __future__ import annotations

from collections.abc import Iterator

from nebula3.common.ttypes import ErrorCode, Tag, Value, Vertex

from tests.support.nebula_model import (
    EdgeKey,
    Failure,
    Schema,
    Space,
    Table,
    edge_value,
    key,
    value,
)
from tests.support.ngql import Statement


def fetch_vertex(space: Space, s: Statement) -> Table:
    space.schema(s.name, edge=False)
    rows = []
    for vid in dict.fromkeys(s.vids):
        tags = space.vertices.get(vid, {})
        if s.name in tags:
            tag = Tag(name=s.name.encode(), props=tags[s.name])
            rows.append([Value(vVal=Vertex(vid=value(vid), tags=[tag]))])
    return Table([s.yields[0][1]], rows)


def fetch_edge(space: Space, s: Statement) -> Table:
    schema = space.schema(s.name, edge=True)
    rows = []
    for src, dst, rank in dict.fromkeys(s.edges):
        props = space.edges.get((src, s.name, dst, rank))
        if props is not None:
            rows.append([edge_value(src, dst, rank, s.name, schema.type_id, props)])
    return Table([s.yields[0][1]], rows)


def go(space: Space, s: Statement, before: Table | None = None) -> Table:
    schema = space.schema(s.name, edge=True)
    starts = _starts(s, before)
    rows, seen = [], set()
    for start, row_in in starts:
        for edge, found in _steps(space, s, schema, start):
            if s.targets is not None and edge[2] not in s.targets:
                continue
            row = [_yield(expression, start, edge, found, row_in) for expression, _ in s.yields]
            identity = tuple(key(v) for v in row)
            if not (s.distinct and identity in seen):
                seen.add(identity)
                rows.append(row)
    return Table([alias for _, alias in s.yields], rows)


def _starts(s: Statement, before: Table | None) -> list[tuple[str, tuple[list[str], list[Value]]]]:
    """(start VID, the input row it came from) for each start of the traversal."""
    if not s.source:
        return [(vid, ([], [])) for vid in dict.fromkeys(s.vids)]
    if before is None:
        raise Failure(ErrorCode.E_SEMANTIC_ERROR, "`$-' is only readable after a pipe")
    column = before.column(s.source)
    return [(row[column].get_sVal().decode(), (before.columns, row)) for row in before.rows]


def _steps(
    space: Space, s: Statement, schema: Schema, start: str
) -> Iterator[tuple[EdgeKey, Value]]:
    """(stored edge key, returned Edge value) per edge met from `start`."""
    for edge, props in space.edges.items():
        src, name, dst, rank = edge
        if name != s.name:
            continue
        if src == start:
            yield edge, edge_value(src, dst, rank, name, schema.type_id, props)
        if dst == start and s.flag:
            yield edge, edge_value(dst, src, rank, name, -schema.type_id, props)


def _yield(
    expression: str,
    start: str,
    edge: EdgeKey,
    found: Value,
    row_in: tuple[list[str], list[Value]],
) -> Value:
    if expression == "edge":
        return found
    if expression == "id($^)":
        return value(start)
    if expression.startswith("$-."):
        columns, row = row_in
        return row[Table(columns, []).column(expression[3:])]
    return value(edge[0] if expression == "src(edge)" else edge[2])


def lookup(space: Space, s: Statement) -> Table:
    prop, wanted = s.condition
    is_edge = s.name in space.edge_types
    space.schema(s.name, edge=is_edge)
    index = space.index_on("EDGE" if is_edge else "TAG", s.name, prop)
    matches, column = value(wanted), prop.encode()
    rows = []
    if is_edge:
        for edge, props in space.edges.items():
            if edge[1] == s.name and props[column] == matches and edge not in index.unindexed:
                rows.append([value(edge[0] if e == "src(edge)" else edge[2]) for e, _ in s.yields])
    else:
        for vid, tags in space.vertices.items():
            tagged = tags.get(s.name)
            if tagged is not None and tagged[column] == matches and vid not in index.unindexed:
                rows.append([_vertex_yield(e, vid, tagged) for e, _ in s.yields])
    return Table([alias for _, alias in s.yields], rows)


def _vertex_yield(expression: str, vid: str, props: dict[bytes, Value]) -> Value:
    if expression == "id(vertex)":
        return value(vid)
    if not expression.startswith("properties(vertex)."):
        raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"{expression} is not a vertex expression")
    return props[expression.split(".", 1)[1].encode()]


# -- pipe stages ------------------------------------------------------------------------


def pipe(space: Space, stage: Statement, before: Table) -> Table:
    if stage.verb == "GO":
        return go(space, stage, before)
    if stage.verb == "GROUP BY":
        return _group(before, stage)
    if stage.verb == "YIELD":
        return Table([stage.yields[0][1]], [[Value(iVal=len(before.rows))]])
    if stage.verb == "ORDER BY":
        rows = list(before.rows)
        for column, descending in reversed(stage.order_by):
            index = before.column(column)
            rows.sort(key=lambda row: _sortable(row[index]), reverse=descending)
        return Table(before.columns, rows)
    return Table(before.columns, before.rows[: stage.limit])


def _sortable(of: Value) -> bytes | int | float:
    """Strings compare as bytes (graphd's order), numbers as numbers."""
    if of.getType() not in (Value.SVAL, Value.IVAL, Value.FVAL):
        raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"cannot order by {of}")
    found: bytes | int | float = of.value
    return found


def _group(before: Table, stage: Statement) -> Table:
    by = before.column(stage.group_by)
    groups: dict[str, list[list[Value]]] = {}
    for row in before.rows:
        groups.setdefault(key(row[by]), []).append(row)
    out = []
    for members in groups.values():
        values = []
        for expression, _ in stage.yields:
            if expression == "count(*)":
                values.append(Value(iVal=len(members)))
            elif expression == f"$-.{stage.group_by}":
                values.append(members[0][by])
            else:
                raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"{expression} is not grouped")
        out.append(values)
    return Table([alias for _, alias in stage.yields], out)
