"""The NebulaGraph schema of the graph store, created at startup if missing.

One space holds every workspace (see the README's NebulaGraph section for why):

    space  <nebula.space_prefix>   vid_type = FIXED_STRING(32)
    tag    entity   (workspace, entity_key, entity_name, entity_type, description,
                     source_ids, doc_ids)                      all string NOT NULL
    edge   relation (workspace, src_key, dst_key, keywords, description, source_ids,
                     doc_ids: string NOT NULL; weight: double NOT NULL)

    index  entity_by_workspace    ON entity(workspace(64))
    index  relation_by_workspace  ON relation(workspace(64))

A VID is the 32-hex-digit hash of (workspace, entity key); the readable key and name are
properties. A relation is one edge, rank 0, from the VID of its smaller entity key to the
VID of the larger one, so each unordered pair has exactly one edge. source_ids and doc_ids
hold JSON arrays (NebulaGraph properties have no list type).

NebulaGraph applies schema changes asynchronously: a new space or tag becomes usable only
after the services' next heartbeat (seconds). `ensure_schema` therefore creates what is
missing, then polls until the space and both schemas answer, and finally checks that an
existing schema matches this one, so a mismatch is a clear startup error.

The two indexes serve the only reads that scan a workspace rather than look up VIDs (graph
statistics). An index misses what was written before it existed, so an index ragstream
creates in a space that may already hold a graph is rebuilt once (REBUILD ... INDEX, a job
that runs in the background: statistics of an upgraded space are complete when it ends).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from nebula3.common.ttypes import ErrorCode

from ragstream.common.storage.nebula.executor import Runner
from ragstream.common.storage.nebula.literals import identifier, quote

VID_LENGTH = 32
VID_TYPE = f"FIXED_STRING({VID_LENGTH})"
TAG = "entity"
EDGE = "relation"
RANK = 0

TAG_PROPS: Mapping[str, str] = {
    "workspace": "string",
    "entity_key": "string",
    "entity_name": "string",
    "entity_type": "string",
    "description": "string",
    "source_ids": "string",
    "doc_ids": "string",
}
EDGE_PROPS: Mapping[str, str] = {
    "workspace": "string",
    "src_key": "string",
    "dst_key": "string",
    "weight": "double",
    "keywords": "string",
    "description": "string",
    "source_ids": "string",
    "doc_ids": "string",
}

WORKSPACE_CHARS = 64
"""The longest workspace name (config.WORKSPACE_PATTERN): the indexes' prefix length."""
INDEXES: tuple[tuple[str, str, str], ...] = (
    ("TAG", "entity_by_workspace", TAG),
    ("EDGE", "relation_by_workspace", EDGE),
)
"""(kind, index name, tag or edge type) of the single-property indexes on `workspace`."""

PROBE_VID = "0" * VID_LENGTH
"""A VID no key hashes to in practice; reading it only proves the schema is visible."""


class SchemaError(RuntimeError):
    """The space or schema is missing, not yet usable in time, or different from ours."""


def create_space(space: str) -> str:
    # Partitions and replicas are left to the cluster's defaults: an operator who wants
    # others creates the space beforehand, and IF NOT EXISTS leaves it as it is.
    return f"CREATE SPACE IF NOT EXISTS {space}(vid_type = {VID_TYPE})"


def _columns(props: Mapping[str, str]) -> str:
    return ", ".join(f"{name} {kind} NOT NULL" for name, kind in props.items())


def create_tag() -> str:
    return f"CREATE TAG IF NOT EXISTS {TAG}({_columns(TAG_PROPS)})"


def create_edge() -> str:
    return f"CREATE EDGE IF NOT EXISTS {EDGE}({_columns(EDGE_PROPS)})"


def create_index(kind: str, name: str, schema: str) -> str:
    return f"CREATE {kind} INDEX IF NOT EXISTS {name} ON {schema}(workspace({WORKSPACE_CHARS}))"


def index_probe(kind: str, schema: str) -> str:
    """A LOOKUP that succeeds once the index on `schema` is usable."""
    yields = "src(edge) AS s" if kind == "EDGE" else "id(vertex) AS vid"
    return f'LOOKUP ON {schema} WHERE {schema}.workspace == "" YIELD {yields}'


def probes(space: str) -> tuple[str, str]:
    """Statements that succeed once the tag and the edge type are usable in `space`."""
    probe = quote(PROBE_VID)
    return (
        f"USE {space}; FETCH PROP ON {TAG} {probe} YIELD vertex AS v",
        f"USE {space}; FETCH PROP ON {EDGE} {probe}->{probe}@{RANK} YIELD edge AS e",
    )


def schema_differences(
    expected: Mapping[str, str], described: Mapping[str, tuple[str, str]]
) -> list[str]:
    """What an existing tag or edge type lacks: described maps field -> (type, nullable)."""
    problems = []
    for name, kind in expected.items():
        if name not in described:
            problems.append(f"property {name} is missing")
            continue
        found, nullable = described[name]
        if found.lower() != kind:
            problems.append(f"property {name} is {found}, expected {kind}")
        if nullable.upper() != "NO":
            problems.append(f"property {name} is nullable, expected NOT NULL")
    return problems


# Errors that mean "not visible yet" are not listed: a new space or schema shows up as
# "not found" under several codes. Only errors that waiting cannot cure stop the wait.
_HOPELESS = {
    ErrorCode.E_SYNTAX_ERROR,
    ErrorCode.E_BAD_PERMISSION,
    ErrorCode.E_BAD_USERNAME_PASSWORD,
}


async def _wait_until_ok(
    runner: Runner, statement: str, what: str, deadline: float, poll_s: float
) -> None:
    while True:
        result = await runner.run(statement, check=False)
        if result.is_succeeded():
            return
        if result.error_code() in _HOPELESS or time.monotonic() >= deadline:
            raise SchemaError(
                f"{what} is not usable: {result.error_msg()} (error {result.error_code()}); "
                f"statement: {statement}"
            )
        await asyncio.sleep(poll_s)


async def _describe(runner: Runner, statement: str) -> list[dict[str, str]]:
    """DESCRIBE output as rows of text (DESCRIBE answers strings, and NULL for no default)."""
    result = await runner.run(statement)
    return [{str(name): str(value) for name, value in row.items()} for row in result.as_primitive()]


async def _check(runner: Runner, space: str) -> None:
    [described_space] = await _describe(runner, f"DESCRIBE SPACE {space}")
    vid_type = described_space.get("Vid Type", "")
    if vid_type.upper() != VID_TYPE:
        raise SchemaError(
            f"space {space} has vid_type {vid_type}, ragstream needs {VID_TYPE}: set "
            "nebula.space_prefix to a new space name (or drop the space)"
        )
    for kind, name, expected in (("TAG", TAG, TAG_PROPS), ("EDGE", EDGE, EDGE_PROPS)):
        rows = await _describe(runner, f"USE {space}; DESCRIBE {kind} {name}")
        problems = schema_differences(expected, {r["Field"]: (r["Type"], r["Null"]) for r in rows})
        if problems:
            raise SchemaError(
                f"{kind.lower()} {name} in space {space} differs from ragstream's schema: "
                f"{'; '.join(problems)}; use a new nebula.space_prefix"
            )


async def ensure_schema(
    runner: Runner, space: str, *, timeout_s: float = 120.0, poll_s: float = 1.0
) -> None:
    """Creates the space and schema if missing and returns once they are usable.

    `runner` must run on a session that is not bound to a space (the space may not exist).
    """
    space = identifier(space)
    deadline = time.monotonic() + timeout_s
    await runner.run(create_space(space))
    await _wait_until_ok(runner, f"USE {space}", f"space {space}", deadline, poll_s)
    await runner.run(f"USE {space}; {create_tag()}")
    await runner.run(f"USE {space}; {create_edge()}")
    for probe, what in zip(probes(space), (f"tag {TAG}", f"edge {EDGE}"), strict=True):
        await _wait_until_ok(runner, probe, f"{what} in space {space}", deadline, poll_s)
    await _check(runner, space)
    for kind, name, schema in INDEXES:
        await _ensure_index(runner, space, (kind, name, schema), deadline, poll_s)


async def _ensure_index(
    runner: Runner, space: str, index: tuple[str, str, str], deadline: float, poll_s: float
) -> None:
    kind, name, schema = index
    rows = await _describe(runner, f"USE {space}; SHOW {kind} INDEXES")
    if any(row.get("Index Name") == name for row in rows):
        return
    await runner.run(f"USE {space}; {create_index(kind, name, schema)}")
    probe = f"USE {space}; {index_probe(kind, schema)}"
    await _wait_until_ok(runner, probe, f"index {name} in space {space}", deadline, poll_s)
    await runner.run(f"USE {space}; REBUILD {kind} INDEX {name}")
