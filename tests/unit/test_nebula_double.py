"""The NebulaGraph test double is only useful if it is strict: these show that it fails
statements graphd would reject or read differently, so passing tests mean something."""

from __future__ import annotations

import pytest
from nebula3.common.ttypes import ErrorCode

from ragstream.common.models import GraphNode
from ragstream.common.storage.nebula import builder
from ragstream.common.storage.nebula.schema import (
    create_edge,
    create_index,
    create_space,
    create_tag,
)
from tests.support.nebula_double import DoubleClient, NebulaDouble

V1, V2 = "a" * 32, "b" * 32


@pytest.fixture
def session() -> DoubleClient:
    client = NebulaDouble().connector().open_session()
    for statement in (create_space("sp"), f"USE sp; {create_tag()}", f"USE sp; {create_edge()}"):
        assert client.execute(statement).is_succeeded()
    return client


def _code(session: DoubleClient, statement: str) -> int:
    return int(session.execute(statement).error_code())


def test_malformed_statements_are_syntax_errors(session: DoubleClient) -> None:
    for statement in (
        f'FETCH PROP ON entity "{V1}" YIELD vertex',  # no alias
        f'FETCH PROP ON entity "{V1}", YIELD vertex AS v',
        f'GO FROM "{V1}" OVER relation YIELD edge AS e | GROUP BY $-.e YIELD $-.x AS x,',
        f'DELETE VERTEX "{V1}" WITH',
        f'FETCH PROP ON entity "{V1} YIELD vertex AS v',  # unterminated literal
        f"FETCH PROP ON entity {V1} YIELD vertex AS v",  # a VID must be a string
        f'INSERT VERTEX entity(workspace) VALUES "{V1}":(1e5)',  # no exponent floats
    ):
        assert _code(session, f"USE sp; {statement}") == ErrorCode.E_SYNTAX_ERROR, statement


def test_a_naively_quoted_name_breaks_or_alters_the_statement(session: DoubleClient) -> None:
    [good] = builder.fetch_nodes("ws", ["x"])
    assert session.execute(f"USE sp; {good}").is_succeeded()
    for name in ('x" YIELD vertex AS v; DROP SPACE sp; #', "line\nbreak", "nul\x00"):
        naive = f'INSERT VERTEX entity(workspace) VALUES "{V1}":("{name}")'
        assert _code(session, f"USE sp; {naive}") == ErrorCode.E_SYNTAX_ERROR


def test_writes_are_checked_against_the_schema(session: DoubleClient) -> None:
    props = "workspace, entity_key, entity_name, entity_type, description, source_ids, doc_ids"
    row = '"ws", "k", "n", "t", "d", "[]", "[]"'
    ok = session.execute(f'USE sp; INSERT VERTEX entity({props}) VALUES "{V1}":({row})')
    assert ok.is_succeeded()
    for statement in (
        f'INSERT VERTEX entity({props}) VALUES "short":({row})',  # VID length
        f'INSERT VERTEX entity(workspace) VALUES "{V1}":("ws")',  # NOT NULL props missing
        f"INSERT EDGE relation(workspace, src_key, dst_key, weight, keywords, description, "
        f'source_ids, doc_ids) VALUES "{V1}"->"{V2}":("w", "a", "b", "heavy", "", "", "", "")',
        f'FETCH PROP ON nosuchtag "{V1}" YIELD vertex AS v',
    ):
        assert not session.execute(f"USE sp; {statement}").is_succeeded(), statement


def test_creating_what_exists_needs_if_not_exists(session: DoubleClient) -> None:
    assert _code(session, "CREATE SPACE sp(vid_type = FIXED_STRING(32))") == ErrorCode.E_EXISTED
    assert session.execute(create_space("sp")).is_succeeded()


def test_lookup_needs_an_index_and_misses_what_predates_it(session: DoubleClient) -> None:
    [insert] = builder.insert_nodes("ws", [GraphNode("a", "A", "t", "d")])
    assert session.execute(f"USE sp; {insert}").is_succeeded()
    lookup = f"USE sp; {builder.count_nodes('ws')}"
    assert _code(session, lookup) == ErrorCode.E_SEMANTIC_ERROR  # no index yet
    index = create_index("TAG", "by_ws", "entity")
    assert session.execute(f"USE sp; {index}").is_succeeded()
    assert session.execute(lookup).column_values("n")[0].as_int() == 0
    assert session.execute("USE sp; REBUILD TAG INDEX by_ws").is_succeeded()
    assert session.execute(lookup).column_values("n")[0].as_int() == 1
    for statement in (
        'LOOKUP ON entity WHERE relation.workspace == "ws" YIELD id(vertex) AS vid',
        'LOOKUP ON entity WHERE entity.workspace == "ws" YIELD edge AS e',
        'LOOKUP ON entity WHERE entity.workspace == "ws" YIELD id(vertex) AS v | LIMIT',
        f'GO FROM "{V1}" OVER relation WHERE dst(edge) IN ["{V2}" YIELD edge AS e',
    ):
        assert _code(session, f"USE sp; {statement}") == ErrorCode.E_SYNTAX_ERROR, statement
