"""Schema bootstrap: created when missing, waited for, and checked when it already exists."""

from __future__ import annotations

import pytest
from nebula3.common.ttypes import ErrorCode

from ragstream.common.models import GraphNode
from ragstream.common.storage.nebula import builder
from ragstream.common.storage.nebula.executor import Runner
from ragstream.common.storage.nebula.schema import (
    EDGE_PROPS,
    TAG_PROPS,
    SchemaError,
    create_edge,
    create_tag,
    ensure_schema,
    schema_differences,
)
from tests.support.nebula_double import NebulaDouble


def runner(double: NebulaDouble) -> Runner:
    return Runner(double.connector().open_session(), threads=1, backoff_s=0.0)


async def test_the_schema_is_created_and_waited_for() -> None:
    double = NebulaDouble(lag=2)
    await ensure_schema(runner(double), "sp", poll_s=0.0)
    space = double.spaces["sp"]
    assert space.tags["entity"].props == dict(TAG_PROPS)
    assert space.edge_types["relation"].props == dict(EDGE_PROPS)
    # Idempotent: a second start finds everything in place and changes nothing.
    await ensure_schema(runner(double), "sp", poll_s=0.0)
    assert len(double.spaces) == 1


async def test_a_schema_that_never_becomes_usable_is_a_clear_error() -> None:
    double = NebulaDouble(lag=1_000_000)
    with pytest.raises(SchemaError, match="space sp is not usable: SpaceNotFound"):
        await ensure_schema(runner(double), "sp", timeout_s=0.05, poll_s=0.01)


async def test_errors_waiting_cannot_cure_stop_the_wait_at_once() -> None:
    double = NebulaDouble(lag=1_000_000)
    double.inject(ErrorCode.E_BAD_PERMISSION, "PermissionError: No permission", when="USE")
    with pytest.raises(SchemaError, match="No permission"):
        await ensure_schema(runner(double), "sp", timeout_s=60.0, poll_s=0.01)
    assert double.statements[-1] == "USE sp"


async def test_an_existing_space_with_another_vid_type_is_rejected() -> None:
    double = NebulaDouble()
    run = runner(double)
    await run.run("CREATE SPACE sp(vid_type = FIXED_STRING(64))")
    with pytest.raises(SchemaError, match=r"vid_type FIXED_STRING\(64\).*space_prefix"):
        await ensure_schema(run, "sp", poll_s=0.0)


async def test_an_existing_tag_with_other_properties_is_rejected() -> None:
    double = NebulaDouble()
    run = runner(double)
    await run.run("CREATE SPACE sp(vid_type = FIXED_STRING(32))")
    await run.run("USE sp; CREATE TAG entity(workspace string NOT NULL, name string NOT NULL)")
    with pytest.raises(SchemaError, match=r"tag entity .*entity_key is missing"):
        await ensure_schema(run, "sp", poll_s=0.0)


def test_schema_differences_name_each_problem() -> None:
    expected = {"a": "string", "b": "double", "c": "string"}
    described = {"a": ("string", "NO"), "b": ("string", "NO"), "c": ("string", "YES")}
    assert schema_differences(expected, described) == [
        "property b is string, expected double",
        "property c is nullable, expected NOT NULL",
    ]
    assert schema_differences(expected, {}) == [f"property {p} is missing" for p in "abc"]


def test_ddl_declares_every_property_not_null() -> None:
    assert create_tag().startswith("CREATE TAG IF NOT EXISTS entity(workspace string NOT NULL")
    assert "weight double NOT NULL" in create_edge()


async def test_indexes_on_workspace_are_created_waited_for_and_rebuilt_once() -> None:
    double = NebulaDouble(lag=2)
    run = runner(double)
    # A space from before the indexes existed, already holding a vertex.
    await ensure_schema(run, "sp", poll_s=0.0)
    double.spaces["sp"].indexes.clear()
    double.statements.clear()
    [insert] = builder.insert_nodes("ws", [GraphNode("a", "A", "t", "d")])
    await run.run(f"USE sp; {insert}")
    await ensure_schema(run, "sp", poll_s=0.0)
    assert set(double.spaces["sp"].indexes) == {"entity_by_workspace", "relation_by_workspace"}
    rebuilt = [s for s in double.statements if "REBUILD" in s]
    assert rebuilt == [
        "USE sp; REBUILD TAG INDEX entity_by_workspace",
        "USE sp; REBUILD EDGE INDEX relation_by_workspace",
    ]
    counted = await run.run(f"USE sp; {builder.count_nodes('ws')}")
    assert counted.column_values("n")[0].as_int() == 1  # the old vertex is indexed
    # Indexes in place: a restart neither creates nor rebuilds anything.
    double.statements.clear()
    await ensure_schema(run, "sp", poll_s=0.0)
    assert not [s for s in double.statements if "INDEX " in s and "SHOW" not in s]
