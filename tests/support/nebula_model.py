"""The NebulaGraph test double's in-memory cluster state and nebula3 value helpers.

`Space` holds what one graph space stores (schemas, indexes, vertices, edges); `Table` is a
statement's result while pipe stages work on it (columns and rows of nebula3 `Value`s),
turned into nebula3's own `DataSet` at the end. Schemas and indexes become usable only after
`pending` failed uses, as schema changes reach graphd and storaged with the next heartbeat.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nebula3.common.ttypes import DataSet, Edge, ErrorCode, Row, Value

EdgeKey = tuple[str, str, str, int]  # (src, edge type, dst, rank)
Props = dict[bytes, Value]


class Failure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def value(raw: object) -> Value:
    if isinstance(raw, str):
        return Value(sVal=raw.encode("utf-8"))
    if isinstance(raw, float):
        return Value(fVal=raw)
    if isinstance(raw, int):
        return Value(iVal=raw)
    raise TypeError(f"no Value for {raw!r}")


def key(of: Value) -> str:
    return repr(of)  # thrift structs compare by fields but are not hashable


def edge_value(src: str, dst: str, rank: int, name: str, type_id: int, props: Props) -> Value:
    edge = Edge(value(src), value(dst), type_id, name.encode(), rank, dict(props))
    return Value(eVal=edge)


@dataclass
class Schema:
    props: dict[str, str]
    pending: int
    """Failed uses left before it becomes visible."""
    type_id: int = 0


@dataclass
class Index:
    """A single-property index of a tag or an edge type."""

    kind: str
    """TAG or EDGE."""
    schema: str
    prop: str
    pending: int
    unindexed: set[object] = field(default_factory=set)
    """Vertex VIDs or edge keys written before the index existed: LOOKUP misses them until
    REBUILD ... INDEX (or until they are written again)."""


@dataclass
class Space:
    vid_length: int
    pending: int
    tags: dict[str, Schema] = field(default_factory=dict)
    edge_types: dict[str, Schema] = field(default_factory=dict)
    indexes: dict[str, Index] = field(default_factory=dict)
    vertices: dict[str, dict[str, Props]] = field(default_factory=dict)
    edges: dict[EdgeKey, Props] = field(default_factory=dict)

    def schema(self, name: str, edge: bool) -> Schema:
        schema = (self.edge_types if edge else self.tags).get(name)
        if schema is None or schema.pending > 0:
            if schema is not None:
                schema.pending -= 1
            raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"No schema found for `{name}'")
        return schema

    def index_on(self, kind: str, schema: str, prop: str) -> Index:
        """The usable index LOOKUP needs; graphd plans no LOOKUP without one."""
        for index in self.indexes.values():
            if (index.kind, index.schema, index.prop) == (kind, schema, prop):
                if index.pending > 0:
                    index.pending -= 1
                    break
                return index
        raise Failure(ErrorCode.E_SEMANTIC_ERROR, "There is no index to use at runtime")

    def written(self, kind: str, schema: str, item: object) -> None:
        """Indexes of `schema` index an item written after they were created."""
        for index in self.indexes.values():
            if (index.kind, index.schema) == (kind, schema):
                index.unindexed.discard(item)


@dataclass
class Table:
    """Rows flowing through a statement's pipe stages."""

    columns: list[str]
    rows: list[list[Value]]

    def column(self, name: str) -> int:
        if name not in self.columns:
            raise Failure(ErrorCode.E_SEMANTIC_ERROR, f"`$-.{name}' is not a column of the input")
        return self.columns.index(name)

    def dataset(self) -> DataSet:
        return DataSet([c.encode() for c in self.columns], [Row(values=r) for r in self.rows])
