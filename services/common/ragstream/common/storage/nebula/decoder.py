"""Result sets of the graph store's statements -> GraphNode / GraphEdge: pure functions.

Keys come from the `entity_key`, `src_key` and `dst_key` properties, never from VIDs (a
VID is a one-way hash) nor from an edge's direction: GO ... BIDIRECT returns an in-edge
reversed (negative type, src and dst swapped), while the stored keys are always in
sorted order. Records of another workspace are dropped, though VIDs hashed with the
workspace already keep them apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from nebula3.data.DataObject import ValueWrapper
from nebula3.data.ResultSet import ResultSet
from nebula3.Exception import InvalidKeyException, InvalidValueTypeException

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.storage.edges import Pair
from ragstream.common.storage.nebula.schema import EDGE, TAG


class DecodeError(RuntimeError):
    """A result does not have the shape the graph store's schema gives it."""


def _text(props: Mapping[str, ValueWrapper], name: str) -> str:
    try:
        return str(props[name].as_string())
    except (KeyError, InvalidValueTypeException) as exc:
        raise DecodeError(f"property {name} is missing or not a string: {exc}") from exc


def _float(props: Mapping[str, ValueWrapper], name: str) -> float:
    try:
        return float(props[name].as_double())
    except (KeyError, InvalidValueTypeException) as exc:
        raise DecodeError(f"property {name} is missing or not a double: {exc}") from exc


def _ids(props: Mapping[str, ValueWrapper], name: str) -> tuple[str, ...]:
    text = _text(props, name)
    try:
        values = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DecodeError(f"property {name} is not a JSON array: {text[:80]!r}") from exc
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise DecodeError(f"property {name} is not a JSON array of strings: {text[:80]!r}")
    return tuple(values)


def _column(result: ResultSet, name: str) -> list[ValueWrapper]:
    columns = list(result.keys())
    if name not in columns:
        raise DecodeError(f"the result has no column {name!r} (columns: {columns})")
    return list(result.column_values(name))


def node(value: ValueWrapper) -> tuple[str, GraphNode]:
    """(workspace, node) of a vertex value."""
    if not value.is_vertex():
        raise DecodeError(f"expected a vertex, got {value}")
    try:
        props = value.as_node().properties(TAG)
    except InvalidKeyException as exc:
        raise DecodeError(f"the vertex has no tag {TAG}") from exc
    return _text(props, "workspace"), GraphNode(
        key=_text(props, "entity_key"),
        name=_text(props, "entity_name"),
        type=_text(props, "entity_type"),
        description=_text(props, "description"),
        source_ids=_ids(props, "source_ids"),
        doc_ids=_ids(props, "doc_ids"),
    )


def edge(value: ValueWrapper) -> tuple[str, GraphEdge]:
    """(workspace, edge) of an edge value, in either direction."""
    if not value.is_edge():
        raise DecodeError(f"expected an edge, got {value}")
    relationship = value.as_relationship()
    if relationship.edge_name() != EDGE:
        raise DecodeError(f"expected a {EDGE} edge, got {relationship.edge_name()}")
    props = relationship.properties()
    return _text(props, "workspace"), GraphEdge(
        source=_text(props, "src_key"),
        target=_text(props, "dst_key"),
        keywords=_text(props, "keywords"),
        description=_text(props, "description"),
        weight=_float(props, "weight"),
        source_ids=_ids(props, "source_ids"),
        doc_ids=_ids(props, "doc_ids"),
    )


def nodes(results: Iterable[ResultSet], workspace: str) -> dict[str, GraphNode]:
    """Nodes by key, from `FETCH ... YIELD vertex AS v` results."""
    found: dict[str, GraphNode] = {}
    for result in results:
        for value in _column(result, "v"):
            owner, decoded = node(value)
            if owner == workspace:
                found[decoded.key] = decoded
    return found


def edges(results: Iterable[ResultSet], workspace: str) -> dict[Pair, GraphEdge]:
    """Edges by (source, target) key pair, each once, from `... YIELD edge AS e` results."""
    found: dict[Pair, GraphEdge] = {}
    for result in results:
        for value in _column(result, "e"):
            owner, decoded = edge(value)
            if owner == workspace:
                found[decoded.source, decoded.target] = decoded
    return found


def degrees(results: Iterable[ResultSet], keys_by_vid: Mapping[str, str]) -> dict[str, int]:
    """Degree by key from `(vid, degree)` results; keys without a row have degree 0."""
    counts = dict.fromkeys(keys_by_vid.values(), 0)
    for result in results:
        for vid_value, degree in zip(
            _column(result, "vid"), _column(result, "degree"), strict=True
        ):
            try:
                vid, count = vid_value.as_string(), degree.as_int()
            except InvalidValueTypeException as exc:
                raise DecodeError(f"expected (string vid, int degree) rows: {exc}") from exc
            if vid not in keys_by_vid:
                raise DecodeError(f"the degree result names a VID that was not asked for: {vid}")
            counts[keys_by_vid[vid]] = count
    return counts


def count(result: ResultSet) -> int:
    """The `n` of a one-row count result."""
    values = _column(result, "n")
    if len(values) != 1:
        raise DecodeError(f"expected one count row, got {len(values)}")
    try:
        return int(values[0].as_int())
    except InvalidValueTypeException as exc:
        raise DecodeError(f"the count is not an integer: {exc}") from exc


def ranked(result: ResultSet) -> tuple[tuple[str, int], ...]:
    """(entity_key, degree) rows, in the result's order."""
    rows = []
    for key, degree in zip(_column(result, "entity_key"), _column(result, "degree"), strict=True):
        try:
            rows.append((str(key.as_string()), int(degree.as_int())))
        except InvalidValueTypeException as exc:
            raise DecodeError(f"expected (string key, int degree) rows: {exc}") from exc
    return tuple(rows)
