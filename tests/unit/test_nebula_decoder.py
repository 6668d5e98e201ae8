"""The result decoder, on result sets built by hand from nebula3's own thrift types."""

from __future__ import annotations

import pytest
from nebula3.common.ttypes import DataSet, Edge, ErrorCode, Row, Tag, Value, Vertex
from nebula3.data.ResultSet import ResultSet
from nebula3.graph.ttypes import ExecutionResponse

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.storage.edges import by_endpoint
from ragstream.common.storage.nebula import decoder
from ragstream.common.storage.nebula.decoder import DecodeError


def s(text: str) -> Value:
    return Value(sVal=text.encode("utf-8"))


def result(columns: list[str], rows: list[list[Value]]) -> ResultSet:
    data = DataSet([c.encode() for c in columns], [Row(values=r) for r in rows])
    return ResultSet(ExecutionResponse(ErrorCode.SUCCEEDED, 1, data, b"sp"), all_latency=1)


def vertex(workspace: str, key: str, **overrides: Value) -> Value:
    props = {
        "workspace": s(workspace),
        "entity_key": s(key),
        "entity_name": s(key.upper()),
        "entity_type": s("person"),
        "description": s('line 1\nline 2 "quoted"'),
        "source_ids": s('["c1","c2"]'),
        "doc_ids": s("[]"),
        **overrides,
    }
    tag = Tag(b"entity", {k.encode(): v for k, v in props.items()})
    return Value(vVal=Vertex(s("v" * 32), [tag]))


def edge(workspace: str, a: str, b: str, *, reversed_: bool = False, **overrides: Value) -> Value:
    props = {
        "workspace": s(workspace),
        "src_key": s(a),
        "dst_key": s(b),
        "weight": Value(fVal=0.5),
        "keywords": s("k"),
        "description": s("d"),
        "source_ids": s('["c1"]'),
        "doc_ids": s('["d1"]'),
        **overrides,
    }
    src, dst, kind = (s("vid-b"), s("vid-a"), -7) if reversed_ else (s("vid-a"), s("vid-b"), 7)
    raw = Edge(src, dst, kind, b"relation", 0, {k.encode(): v for k, v in props.items()})
    return Value(eVal=raw)


def test_vertices_decode_to_nodes_of_the_workspace_only() -> None:
    rs = result(["v"], [[vertex("ws", "alice")], [vertex("other", "bob")]])
    assert decoder.nodes([rs], "ws") == {
        "alice": GraphNode(
            key="alice",
            name="ALICE",
            type="person",
            description='line 1\nline 2 "quoted"',
            source_ids=("c1", "c2"),
            doc_ids=(),
        )
    }


def test_edges_decode_by_their_stored_keys_in_either_direction() -> None:
    forward = edge("ws", "a", "b")
    backward = edge("ws", "a", "b", reversed_=True)  # how GO ... BIDIRECT returns an in-edge
    found = decoder.edges([result(["e"], [[forward], [backward]])], "ws")
    expected = GraphEdge("a", "b", "k", "d", 0.5, ("c1",), ("d1",))
    assert found == {("a", "b"): expected}
    assert by_endpoint(found, ["a", "b", "c"]) == {
        "a": [expected],
        "b": [expected],
        "c": [],
    }


def test_a_self_loop_is_listed_once_for_its_key() -> None:
    loop = GraphEdge("a", "a", "", "", 1.0)
    assert by_endpoint({("a", "a"): loop}, ["a"]) == {"a": [loop]}


def test_degrees_default_to_zero_and_reject_vids_not_asked_for() -> None:
    rs = result(["vid", "degree"], [[s("vid-a"), Value(iVal=3)]])
    assert decoder.degrees([rs], {"vid-a": "a", "vid-b": "b"}) == {"a": 3, "b": 0}
    with pytest.raises(DecodeError, match="not asked for"):
        decoder.degrees([rs], {"vid-b": "b"})


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (vertex("ws", "a", entity_name=Value(iVal=1)), "entity_name is missing or not a string"),
        (vertex("ws", "a", source_ids=s("not json")), "not a JSON array"),
        (vertex("ws", "a", source_ids=s("[1, 2]")), "array of strings"),
        (Value(iVal=1), "expected a vertex"),
    ],
)
def test_malformed_vertices_are_clear_errors(value: Value, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decoder.nodes([result(["v"], [[value]])], "ws")


def test_malformed_edges_and_results_are_clear_errors() -> None:
    bad_weight = edge("ws", "a", "b", weight=s("heavy"))
    with pytest.raises(DecodeError, match="weight is missing or not a double"):
        decoder.edges([result(["e"], [[bad_weight]])], "ws")
    with pytest.raises(DecodeError, match="no column 'e'"):
        decoder.edges([result(["x"], [[edge("ws", "a", "b")]])], "ws")
    other_type = Value(eVal=Edge(s("a"), s("b"), 1, b"follows", 0, {}))
    with pytest.raises(DecodeError, match="expected a relation edge"):
        decoder.edges([result(["e"], [[other_type]])], "ws")
