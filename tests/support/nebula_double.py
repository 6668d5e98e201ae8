"""An in-process stand-in for a NebulaGraph cluster, for statement- and result-level tests.

It receives statement text only (through the same `Connector` seam as nebula3's clients),
parses it with `tests.support.ngql` (graphd's lexing rules, strict where versions differ),
applies it to an in-memory graph and answers with nebula3's own `ResultSet` built from
nebula3's thrift types (ExecutionResponse, DataSet, Row, Value, Vertex, Tag, Edge). So the
real decoder and executor code runs on real result objects, and a malformed statement, or
one a value has altered, fails like it would on graphd.

Semantics modelled (NebulaGraph 3.x): INSERT overwrites; DELETE VERTEX ... WITH EDGE removes
the vertex and its edges in both directions, whether or not the vertex exists; edges may
dangle; GO ... BIDIRECT returns an in-edge reversed (src = the start vertex, negative
type), while src(edge)/dst(edge) give the stored direction; a new space, tag or edge type
is visible only after `lag` failed attempts to use it (schema changes reach graphd and
storaged with the next heartbeat). `inject` and `disconnect` make the next statements fail.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from nebula3.common.ttypes import DataSet, Edge, ErrorCode, NullType, Row, Tag, Value, Vertex
from nebula3.data.ResultSet import ResultSet
from nebula3.Exception import IOErrorException
from nebula3.graph.ttypes import ExecutionResponse

from tests.support.ngql import NgqlSyntaxError, Statement, parse

EdgeKey = tuple[str, str, str, int]  # (src, edge type, dst, rank)


class Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _value(raw: object) -> Value:
    if isinstance(raw, str):
        return Value(sVal=raw.encode("utf-8"))
    if isinstance(raw, float):
        return Value(fVal=raw)
    if isinstance(raw, int):
        return Value(iVal=raw)
    raise TypeError(f"no Value for {raw!r}")


def _key(value: Value) -> str:
    return repr(value)  # thrift structs compare by fields but are not hashable


@dataclass
class Schema:
    props: dict[str, str]
    pending: int
    """Failed uses left before it becomes visible."""
    type_id: int = 0


@dataclass
class Space:
    vid_length: int
    pending: int
    tags: dict[str, Schema] = field(default_factory=dict)
    edge_types: dict[str, Schema] = field(default_factory=dict)
    vertices: dict[str, dict[str, dict[bytes, Value]]] = field(default_factory=dict)
    edges: dict[EdgeKey, dict[bytes, Value]] = field(default_factory=dict)


class NebulaDouble:
    """The cluster: spaces, a statement log, and fault injection."""

    def __init__(self, *, lag: int = 0) -> None:
        self.lag = lag
        self.spaces: dict[str, Space] = {}
        self.statements: list[str] = []
        self._faults: list[tuple[str, Callable[[], None]]] = []
        self._lock = threading.Lock()

    def connector(self) -> DoubleConnector:
        return DoubleConnector(self)

    def inject(self, code: int, message: str, times: int = 1, when: str = "") -> None:
        """The next `times` statements (starting with `when`) fail with this error."""

        def fail() -> None:
            raise Failure(code, message)

        self._faults += [(when, fail)] * times

    def disconnect(self, times: int = 1) -> None:
        """The next `times` statements raise nebula3's IOErrorException."""

        def broken() -> None:
            raise IOErrorException(IOErrorException.E_CONNECT_BROKEN, "connection reset")

        self._faults += [("", broken)] * times

    def execute(self, text: str, session: DoubleClient) -> ResultSet:
        with self._lock:
            self.statements.append(text)
            fault = next((f for f in self._faults if text.startswith(f[0])), None)
            if fault is not None:
                self._faults.remove(fault)
                try:
                    fault[1]()
                except Failure as failure:
                    return _response(failure.code, failure.args[0])
            try:
                data: DataSet | None = None
                for statement in parse(text):
                    data = self._apply(statement, session)
                return _response(ErrorCode.SUCCEEDED, "", data, session.space)
            except NgqlSyntaxError as exc:
                return _response(ErrorCode.E_SYNTAX_ERROR, str(exc))
            except Failure as failure:
                return _response(failure.code, failure.args[0])

    # -- statements -----------------------------------------------------------------------

    def _apply(self, s: Statement, session: DoubleClient) -> DataSet | None:
        if s.verb == "USE":
            self._visible_space(s.name)
            session.space = s.name
            return None
        if s.verb == "CREATE SPACE":
            _check_new(self.spaces, s)
            self.spaces.setdefault(s.name, Space(s.vid_length, self.lag))
            return None
        if s.verb == "DESCRIBE" and s.kind == "SPACE":
            return _describe_space(self._visible_space(s.name), s.name)
        space = self._visible_space(session.space)
        handler = getattr(self, "_" + s.verb.lower().replace(" ", "_"))
        result: DataSet | None = handler(space, s)
        return result

    def _visible_space(self, name: str | None) -> Space:
        space = self.spaces.get(name or "")
        if space is None or space.pending > 0:
            if space is not None:
                space.pending -= 1
            raise Failure(ErrorCode.E_EXECUTION_ERROR, f"SpaceNotFound: SpaceName `{name}`")
        return space

    def _schema(self, space: Space, name: str, edge: bool) -> Schema:
        schema = (space.edge_types if edge else space.tags).get(name)
        if schema is None or schema.pending > 0:
            if schema is not None:
                schema.pending -= 1
            raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"No schema found for `{name}'")
        return schema

    def _create_tag(self, space: Space, s: Statement) -> None:
        _check_new(space.tags, s)
        space.tags.setdefault(s.name, Schema(dict(s.props), self.lag))

    def _create_edge(self, space: Space, s: Statement) -> None:
        _check_new(space.edge_types, s)
        type_id = len(space.edge_types) + 1
        space.edge_types.setdefault(s.name, Schema(dict(s.props), self.lag, type_id))

    def _describe(self, space: Space, s: Statement) -> DataSet:
        schema = self._schema(space, s.name, s.kind == "EDGE")
        null = Value(nVal=NullType.__NULL__)
        rows = [[_value(n), _value(k), _value("NO"), null, null] for n, k in schema.props.items()]
        return _dataset(["Field", "Type", "Null", "Default", "Comment"], rows)

    def _props(
        self, space: Space, s: Statement, values: list[object], edge: bool
    ) -> dict[bytes, Value]:
        schema = self._schema(space, s.name, edge)
        names = [name for name, _ in s.props]
        if sorted(names) != sorted(schema.props) or len(values) != len(names):
            raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"props {names} do not match {s.name}")
        for name, raw in zip(names, values, strict=True):
            wanted = {"string": str, "double": float}[schema.props[name]]
            if type(raw) is not wanted:
                raise Failure(ErrorCode.E_EXECUTION_ERROR, f"{name}: wrong type {raw!r}")
        return {name.encode(): _value(raw) for name, raw in zip(names, values, strict=True)}

    def _check_vid(self, space: Space, vid: str) -> str:
        if len(vid.encode("utf-8")) != space.vid_length:
            raise Failure(ErrorCode.E_EXECUTION_ERROR, f"VID {vid!r} is not {space.vid_length}")
        return vid

    def _insert_vertex(self, space: Space, s: Statement) -> None:
        for vid, values in zip(s.vids, s.rows, strict=True):
            props = self._props(space, s, values, edge=False)
            space.vertices.setdefault(self._check_vid(space, vid), {})[s.name] = props

    def _insert_edge(self, space: Space, s: Statement) -> None:
        for (src, dst, rank), values in zip(s.edges, s.rows, strict=True):
            props = self._props(space, s, values, edge=True)
            key = (self._check_vid(space, src), s.name, self._check_vid(space, dst), rank)
            space.edges[key] = props

    def _delete_vertex(self, space: Space, s: Statement) -> None:
        doomed = set(s.vids)
        for vid in doomed:
            space.vertices.pop(vid, None)
        if s.flag:
            for key in [k for k in space.edges if k[0] in doomed or k[2] in doomed]:
                del space.edges[key]

    def _delete_edge(self, space: Space, s: Statement) -> None:
        self._schema(space, s.name, edge=True)
        for src, dst, rank in s.edges:
            space.edges.pop((src, s.name, dst, rank), None)

    def _fetch_vertex(self, space: Space, s: Statement) -> DataSet:
        self._schema(space, s.name, edge=False)
        rows = []
        for vid in dict.fromkeys(s.vids):
            tags = space.vertices.get(vid, {})
            if s.name in tags:
                tag = Tag(name=s.name.encode(), props=tags[s.name])
                rows.append([Value(vVal=Vertex(vid=_value(vid), tags=[tag]))])
        return _dataset([s.yields[0][1]], rows)

    def _fetch_edge(self, space: Space, s: Statement) -> DataSet:
        schema = self._schema(space, s.name, edge=True)
        rows = []
        for src, dst, rank in dict.fromkeys(s.edges):
            props = space.edges.get((src, s.name, dst, rank))
            if props is not None:
                rows.append([_edge_value(src, dst, rank, s.name, schema.type_id, props)])
        return _dataset([s.yields[0][1]], rows)

    def _go(self, space: Space, s: Statement) -> DataSet:
        schema = self._schema(space, s.name, edge=True)
        rows, seen = [], set()
        for start, edge, value in self._steps(space, s, schema):
            row = [_yield(expression, start, edge, value) for expression, _ in s.yields]
            key = tuple(_key(v) for v in row)
            if not (s.distinct and key in seen):
                seen.add(key)
                rows.append(row)
        columns = [alias for _, alias in s.yields]
        if s.group_yields is None:
            return _dataset(columns, rows)
        return _group(columns, rows, s.group_by, s.group_yields)

    def _steps(
        self, space: Space, s: Statement, schema: Schema
    ) -> Iterator[tuple[str, EdgeKey, Value]]:
        """(start vid, stored edge key, returned Edge value) per edge met from each start."""
        for start in dict.fromkeys(s.vids):
            for key, props in space.edges.items():
                src, name, dst, rank = key
                if name != s.name:
                    continue
                if src == start:
                    yield start, key, _edge_value(src, dst, rank, name, schema.type_id, props)
                if dst == start and s.flag:
                    yield start, key, _edge_value(dst, src, rank, name, -schema.type_id, props)


def _check_new(existing: Mapping[str, object], s: Statement) -> None:
    if s.name in existing and not s.flag:
        raise Failure(ErrorCode.E_EXISTED, f"Existed: {s.name}")


def _yield(expression: str, start: str, edge: EdgeKey, value: Value) -> Value:
    if expression == "edge":
        return value
    if expression == "id($^)":
        return _value(start)
    return _value(edge[0] if expression == "src(edge)" else edge[2])


def _group(
    columns: list[str], rows: list[list[Value]], by: str, items: list[tuple[str, str]]
) -> DataSet:
    if by not in columns:
        raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"`$-.{by}' is not a column of the input")
    groups: dict[str, list[list[Value]]] = {}
    for row in rows:
        groups.setdefault(_key(row[columns.index(by)]), []).append(row)
    out = []
    for members in groups.values():
        values = []
        for expression, _ in items:
            if expression == "count(*)":
                values.append(Value(iVal=len(members)))
            elif expression == f"$-.{by}":
                values.append(members[0][columns.index(by)])
            else:
                raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"{expression} is not grouped")
        out.append(values)
    return _dataset([alias for _, alias in items], out)


def _edge_value(
    src: str, dst: str, rank: int, name: str, type_id: int, props: dict[bytes, Value]
) -> Value:
    edge = Edge(_value(src), _value(dst), type_id, name.encode(), rank, dict(props))
    return Value(eVal=edge)


def _dataset(columns: list[str], rows: list[list[Value]]) -> DataSet:
    return DataSet([c.encode() for c in columns], [Row(values=row) for row in rows])


def _describe_space(space: Space, name: str) -> DataSet:
    columns = ["ID", "Name", "Partition Number", "Replica Factor", "Charset", "Collate"]
    columns += ["Vid Type", "Atomic Edge", "Zones", "Comment"]
    values: list[object] = [1, name, 10, 1, "utf8", "utf8_bin", f"FIXED_STRING({space.vid_length})"]
    row = [_value(v) for v in values] + [Value(bVal=False), _value("default_zone"), _value("")]
    return _dataset(columns, [row])


def _response(
    code: int, message: str, data: DataSet | None = None, space: str | None = None
) -> ResultSet:
    response = ExecutionResponse(
        error_code=code,
        latency_in_us=1,
        data=data,
        space_name=(space or "").encode(),
        error_msg=message.encode("utf-8") if message else None,
    )
    return ResultSet(response, all_latency=1)


class DoubleClient:
    """A session (or a session pool: `pinned` resets the space after every request)."""

    def __init__(self, double: NebulaDouble, space: str | None, pinned: bool) -> None:
        self._double = double
        self.space = space
        self._pinned = space if pinned else None
        self.closed = False

    def execute(self, stmt: str) -> ResultSet:
        if self.closed:
            raise RuntimeError("the session has been released")
        try:
            return self._double.execute(stmt, self)
        finally:
            if self._pinned is not None:
                self.space = self._pinned

    def close(self) -> None:
        self.closed = True


class DoubleConnector:
    def __init__(self, double: NebulaDouble) -> None:
        self.double = double
        self.clients: list[DoubleClient] = []

    def open_session(self) -> DoubleClient:
        self.clients.append(DoubleClient(self.double, None, pinned=False))
        return self.clients[-1]

    def open_pool(self, space: str) -> DoubleClient:
        # nebula3's SessionPool runs `USE <space>` when it opens a session and fails if it cannot.
        probe = DoubleClient(self.double, None, pinned=False)
        result = probe.execute(f"USE {space}")
        if not result.is_succeeded():
            raise RuntimeError(f"Failed to get session, cannot set the session space to {space}")
        self.clients.append(DoubleClient(self.double, space, pinned=True))
        return self.clients[-1]
