"""The nGQL statement builder: exact statements per operation, and safe literals for any text.

Statements are checked with tests.support.ngql, which lexes like graphd (and is stricter
where graphd versions differ), so "safe" means: the statement parses to exactly the
intended shape, and each text value comes back unchanged from its literal.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.storage.nebula import builder
from ragstream.common.storage.nebula.literals import identifier, number, quote, vid
from tests.support.ngql import NgqlSyntaxError, parse, tokenize

HOSTILE = [
    '"',
    "\\",
    '\\"',
    "\n",
    "\x00",
    "\x001",
    '"); DROP SPACE ragstream; ("',
    "\\101",
    "\\u0041",
    "# x",
    "/* x",
]


def _node(text: str) -> GraphNode:
    return GraphNode(
        key=text, name=text, type=text, description=text, source_ids=(text,), doc_ids=()
    )


def _edge(text: str, weight: float = 1.5) -> GraphEdge:
    return GraphEdge(source=text, target="anchor", keywords=text, description=text, weight=weight)


def _shape(statement: str) -> list[object]:
    """The statement with its string literals blanked: what no value may change."""
    return [(t.kind, None if t.kind == "STRING" else t.value) for t in tokenize(statement)]


# -- literals ---------------------------------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(st.text())
@example("".join(chr(c) for c in range(0, 128)))
@example("\x000\x007\\0\\x0041")
def test_quote_gives_a_literal_whose_value_is_the_text(text: str) -> None:
    [token] = tokenize(quote(text))
    assert (token.kind, token.value) == ("STRING", text)


@pytest.mark.parametrize("text", HOSTILE)
def test_quote_escapes_only_with_escapes_every_version_reads(text: str) -> None:
    literal = quote(text)
    assert re.fullmatch(r'"(?:[^\\"\n\x00]|\\[\\"nrt\x00])*"', literal), literal
    [token] = tokenize(literal)
    assert token.value == text


def test_quote_rejects_text_that_is_not_unicode_scalar_values() -> None:
    with pytest.raises(ValueError, match="lone surrogate"):
        quote("a\ud800b")


def test_the_test_lexer_rejects_what_graphd_versions_read_differently() -> None:
    for literal in ('"\\101"', '"\\u0041"', '"\\N"', '"a\x00b"', '"a\nb"', '"open'):
        with pytest.raises(NgqlSyntaxError):
            tokenize(literal)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
@example(1e-300)
@example(1e300)
@example(-0.0)
def test_numbers_are_positional_literals_that_round_trip(value: float) -> None:
    text = number(value)
    assert "e" not in text.lower() and "." in text
    tokens = tokenize(text)
    magnitude = tokens[-1].value
    assert isinstance(magnitude, float)
    assert (-magnitude if tokens[0].value == "-" else magnitude) == value


def test_numbers_must_be_finite() -> None:
    for value in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError, match="finite"):
            number(value)


def test_only_plain_names_stand_bare_in_statements() -> None:
    assert identifier("ragstream_2") == "ragstream_2"
    for bad in ("", "2x", "a-b", "a b", "a;DROP", "a`"):
        with pytest.raises(ValueError, match="not a valid NebulaGraph name"):
            identifier(bad)


def test_vids_are_fixed_length_hashes_that_keep_workspaces_apart() -> None:
    assert len(vid("ws", "a")) == 32 and set(vid("ws", "a")) <= set("0123456789abcdef")
    assert vid("ws", "a") == vid("ws", "a")
    assert vid("ws", "a") != vid("ws2", "a")
    assert vid("ab", "c") != vid("a", "bc")
    assert len(vid("ws", "x" * 10_000)) == 32


# -- statements -------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text())
@example("".join(HOSTILE))
def test_any_name_reaches_statements_only_as_exact_literals(name: str) -> None:
    benign = "plain"
    [insert] = builder.insert_nodes("ws", [_node(name)])
    assert _shape(insert) == _shape(builder.insert_nodes("ws", [_node(benign)])[0])
    [parsed] = parse(insert)
    assert parsed.vids == [vid("ws", name)]
    assert parsed.rows == [
        ["ws", name, name, name, name, json.dumps([name], ensure_ascii=False), "[]"]
    ]

    [insert_edge] = builder.insert_edges("ws", [_edge(name)])
    assert _shape(insert_edge) == _shape(builder.insert_edges("ws", [_edge(benign)])[0])
    [parsed] = parse(insert_edge)
    first, second = sorted((name, "anchor"))
    assert parsed.edges == [(vid("ws", first), vid("ws", second), 0)]
    assert parsed.rows[0][:6] == ["ws", first, second, 1.5, name, name]

    # Reads and deletes carry only VIDs: the name itself never reaches them.
    for build in (builder.fetch_nodes, builder.delete_vertices, builder.edges_of, builder.degrees):
        [statement] = build("ws", [name])
        assert _shape(statement) == _shape(build("ws", [benign])[0])
        assert parse(statement)[0].vids == [vid("ws", name)]


def test_statements_of_each_operation() -> None:
    a, b = vid("ws", "a"), vid("ws", "b")
    assert builder.insert_nodes("ws", [_node("b"), _node("a"), _node("b")]) == [
        "INSERT VERTEX entity(workspace, entity_key, entity_name, entity_type, description, "
        f'source_ids, doc_ids) VALUES "{b}":("ws", "b", "b", "b", "b", "[\\"b\\"]", "[]"), '
        f'"{a}":("ws", "a", "a", "a", "a", "[\\"a\\"]", "[]")'
    ]
    assert builder.insert_edges("ws", [_edge("b", weight=-0.25)]) == [
        "INSERT EDGE relation(workspace, src_key, dst_key, weight, keywords, description, "
        f'source_ids, doc_ids) VALUES "{vid("ws", "anchor")}"->"{b}"@0:'
        '("ws", "anchor", "b", -0.25, "b", "b", "[]", "[]")'
    ]
    assert builder.delete_vertices("ws", ["a", "b", "a"]) == [
        f'DELETE VERTEX "{a}", "{b}" WITH EDGE'
    ]
    assert builder.delete_edges("ws", [("b", "a"), ("a", "b")]) == [
        f'DELETE EDGE relation "{a}"->"{b}"@0'
    ]
    assert builder.fetch_nodes("ws", ["b", "a"]) == [
        f'FETCH PROP ON entity "{b}", "{a}" YIELD vertex AS v'
    ]
    assert builder.fetch_edges("ws", [("b", "a")]) == [
        f'FETCH PROP ON relation "{a}"->"{b}"@0 YIELD edge AS e'
    ]
    assert builder.edges_of("ws", ["a", "b"]) == [
        f'GO FROM "{a}", "{b}" OVER relation BIDIRECT YIELD edge AS e'
    ]
    assert builder.degrees("ws", ["a"]) == [
        f'GO FROM "{a}" OVER relation BIDIRECT YIELD DISTINCT id($^) AS vid, src(edge) AS s, '
        "dst(edge) AS d | GROUP BY $-.vid YIELD $-.vid AS vid, count(*) AS degree"
    ]
    for build in (builder.insert_nodes, builder.insert_edges):
        assert build("ws", []) == []
    for read in (builder.fetch_nodes, builder.edges_of, builder.degrees):
        assert read("ws", []) == []


def test_every_statement_parses() -> None:
    statements = [
        *builder.insert_nodes("ws", [_node("a")]),
        *builder.insert_edges("ws", [_edge("a")]),
        *builder.delete_vertices("ws", ["a"]),
        *builder.delete_edges("ws", [("a", "b")]),
        *builder.fetch_nodes("ws", ["a"]),
        *builder.fetch_edges("ws", [("a", "b")]),
        *builder.edges_of("ws", ["a"]),
        *builder.degrees("ws", ["a"]),
    ]
    verbs = [parse(s)[0].verb for s in statements]
    assert verbs == [
        "INSERT VERTEX",
        "INSERT EDGE",
        "DELETE VERTEX",
        "DELETE EDGE",
        "FETCH VERTEX",
        "FETCH EDGE",
        "GO",
        "GO",
    ]


def test_a_batch_of_200_entities_is_one_statement_and_huge_batches_split() -> None:
    keys = [f"entity-{i}" for i in range(200)]
    for build in (builder.edges_of, builder.degrees, builder.fetch_nodes):
        [statement] = build("ws", keys)
        assert len(parse(statement)[0].vids) == 200
    many = [f"entity-{i}" for i in range(2500)]
    statements = builder.edges_of("ws", many)
    assert [len(parse(s)[0].vids) for s in statements] == [1000, 1000, 500]
    assert len(builder.insert_nodes("ws", [_node(k) for k in keys])) == 1
    assert len(builder.insert_nodes("ws", [_node(k) for k in many])) == 10


def test_statements_stay_under_the_size_cap() -> None:
    big = [GraphNode(f"n{i}", "n", "t", "x" * 100_000) for i in range(30)]
    statements = builder.insert_nodes("ws", big)
    assert len(statements) == 4  # nine 100 kB rows per 1 MB statement
    assert all(len(s.encode()) <= builder.MAX_BYTES for s in statements)
    assert sum(len(parse(s)[0].rows) for s in statements) == 30
