"""An in-process stand-in for a NebulaGraph cluster, for statement- and result-level tests.

It receives statement text only (through the same `Connector` seam as nebula3's clients),
parses it with `tests.support.ngql` (graphd's lexing rules, strict where versions differ),
applies it to an in-memory graph and answers with nebula3's own `ResultSet` built from
nebula3's thrift types (ExecutionResponse, DataSet, Row, Value, Vertex, Tag, Edge). So the
real decoder and executor code runs on real result objects, and a malformed statement, or
one a value has altered, fails like it would on graphd.

Semantics modelled (NebulaGraph 3.x): INSERT overwrites; DELETE VERTEX ... WITH EDGE removes
the vertex and its edges in both directions, whether or not the vertex exists; edges may
dangle; a new space, tag, edge type or index is visible only after `lag` failed attempts to
use it (schema changes reach graphd and storaged with the next heartbeat); an index misses
what was written before it existed until REBUILD. Reads (FETCH, GO, LOOKUP, pipes) are in
`tests.support.nebula_reads`. `inject` and `disconnect` make the next statements fail.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from nebula3.common.ttypes import DataSet, ErrorCode, NList, NullType, Value
from nebula3.data.ResultSet import ResultSet
from nebula3.Exception import IOErrorException
from nebula3.graph.ttypes import ExecutionResponse

from tests.support import nebula_reads as reads
from tests.support.nebula_model import Failure, Index, Schema, Space, Table, value
from tests.support.ngql import NgqlSyntaxError, Statement, parse


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
                    table = self._apply(statement, session)
                    for stage in statement.pipes:
                        if table is None:
                            raise Failure(ErrorCode.E_SEMANTIC_ERROR, "nothing to pipe")
                        table = reads.pipe(self._visible_space(session.space), stage, table)
                    data = table.dataset() if table is not None else None
                return _response(ErrorCode.SUCCEEDED, "", data, session.space)
            except NgqlSyntaxError as exc:
                return _response(ErrorCode.E_SYNTAX_ERROR, str(exc))
            except Failure as failure:
                return _response(failure.code, failure.args[0])

    # -- statements -----------------------------------------------------------------------

    def _apply(self, s: Statement, session: DoubleClient) -> Table | None:
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
        read = READS.get(s.verb)
        if read is not None:
            return read(space, s)
        handler = getattr(self, "_" + s.verb.lower().replace(" ", "_"))
        result: Table | None = handler(space, s)
        return result

    def _visible_space(self, name: str | None) -> Space:
        space = self.spaces.get(name or "")
        if space is None or space.pending > 0:
            if space is not None:
                space.pending -= 1
            raise Failure(ErrorCode.E_EXECUTION_ERROR, f"SpaceNotFound: SpaceName `{name}`")
        return space

    def _create_tag(self, space: Space, s: Statement) -> None:
        _check_new(space.tags, s)
        space.tags.setdefault(s.name, Schema(dict(s.props), self.lag))

    def _create_edge(self, space: Space, s: Statement) -> None:
        _check_new(space.edge_types, s)
        type_id = len(space.edge_types) + 1
        space.edge_types.setdefault(s.name, Schema(dict(s.props), self.lag, type_id))

    def _create_index(self, space: Space, s: Statement) -> None:
        _check_new(space.indexes, s)
        schemas = space.edge_types if s.kind == "EDGE" else space.tags
        [(prop, _)] = s.props
        if prop not in schemas.get(s.schema, Schema({}, 0)).props:
            raise Failure(ErrorCode.E_NOT_FOUND, f"{s.schema}.{prop} not found")
        if s.name not in space.indexes:
            existing = space.edges if s.kind == "EDGE" else space.vertices
            index = Index(s.kind, s.schema, prop, self.lag, set(existing))
            space.indexes[s.name] = index

    def _show_indexes(self, space: Space, s: Statement) -> Table:
        by = "By Edge" if s.kind == "EDGE" else "By Tag"
        rows = [
            [value(n), value(space.indexes[n].schema), Value(lVal=NList([value(i.prop)]))]
            for n, i in space.indexes.items()
            if i.kind == s.kind
        ]
        return Table(["Index Name", by, "Columns"], rows)

    def _rebuild_index(self, space: Space, s: Statement) -> Table:
        index = space.indexes.get(s.name)
        if index is None or index.kind != s.kind or index.pending > 0:
            if index is not None:
                index.pending -= 1
            raise Failure(ErrorCode.E_EXECUTION_ERROR, f"Index not found: {s.name}")
        index.unindexed.clear()
        return Table(["New Job Id"], [[Value(iVal=len(self.statements))]])

    def _describe(self, space: Space, s: Statement) -> Table:
        schema = space.schema(s.name, s.kind == "EDGE")
        null = Value(nVal=NullType.__NULL__)
        rows = [[value(n), value(k), value("NO"), null, null] for n, k in schema.props.items()]
        return Table(["Field", "Type", "Null", "Default", "Comment"], rows)

    def _props(
        self, space: Space, s: Statement, values: list[object], edge: bool
    ) -> dict[bytes, Value]:
        schema = space.schema(s.name, edge)
        names = [name for name, _ in s.props]
        if sorted(names) != sorted(schema.props) or len(values) != len(names):
            raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"props {names} do not match {s.name}")
        for name, raw in zip(names, values, strict=True):
            wanted = {"string": str, "double": float}[schema.props[name]]
            if type(raw) is not wanted:
                raise Failure(ErrorCode.E_EXECUTION_ERROR, f"{name}: wrong type {raw!r}")
        return {name.encode(): value(raw) for name, raw in zip(names, values, strict=True)}

    def _check_vid(self, space: Space, vid: str) -> str:
        if len(vid.encode("utf-8")) != space.vid_length:
            raise Failure(ErrorCode.E_EXECUTION_ERROR, f"VID {vid!r} is not {space.vid_length}")
        return vid

    def _insert_vertex(self, space: Space, s: Statement) -> None:
        for vid, values in zip(s.vids, s.rows, strict=True):
            props = self._props(space, s, values, edge=False)
            space.vertices.setdefault(self._check_vid(space, vid), {})[s.name] = props
            space.written("TAG", s.name, vid)

    def _insert_edge(self, space: Space, s: Statement) -> None:
        for (src, dst, rank), values in zip(s.edges, s.rows, strict=True):
            props = self._props(space, s, values, edge=True)
            key = (self._check_vid(space, src), s.name, self._check_vid(space, dst), rank)
            space.edges[key] = props
            space.written("EDGE", s.name, key)

    def _delete_vertex(self, space: Space, s: Statement) -> None:
        doomed = set(s.vids)
        for vid in doomed:
            space.vertices.pop(vid, None)
        if s.flag:
            for key in [k for k in space.edges if k[0] in doomed or k[2] in doomed]:
                del space.edges[key]

    def _delete_edge(self, space: Space, s: Statement) -> None:
        space.schema(s.name, edge=True)
        for src, dst, rank in s.edges:
            space.edges.pop((src, s.name, dst, rank), None)


READS: dict[str, Callable[[Space, Statement], Table]] = {
    "FETCH VERTEX": reads.fetch_vertex,
    "FETCH EDGE": reads.fetch_edge,
    "GO": reads.go,
    "LOOKUP": reads.lookup,
}


def _check_new(existing: Mapping[str, object], s: Statement) -> None:
    if s.name in existing and not s.flag:
        raise Failure(ErrorCode.E_EXISTED, f"Existed: {s.name}")


def _describe_space(space: Space, name: str) -> Table:
    columns = ["ID", "Name", "Partition Number", "Replica Factor", "Charset", "Collate"]
    columns += ["Vid Type", "Atomic Edge", "Zones", "Comment"]
    values: list[object] = [1, name, 10, 1, "utf8", "utf8_bin", f"FIXED_STRING({space.vid_length})"]
    row = [value(v) for v in values] + [Value(bVal=False), value("default_zone"), value("")]
    return Table(columns, [row])


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
