"""The embedded graph store's reads seek by key, whatever the planner guesses.

Without statistics SQLite reads `workspace = ?` as a few rows, and for a SELECT that needs
columns outside an index it may scan the workspace's whole primary-key range rather than
seek each key: 25 ms a read at 100,000 edges against hundredths of a millisecond. The plans
are checked here, so a rewrite that lets the planner choose the scan again fails."""

from __future__ import annotations

import sqlite3

import pytest

from ragstream.common.storage.sqlite import graph

WORKSPACE_SCAN = "USING PRIMARY KEY (workspace=?)"


def plan(sql: str, params: tuple[str, ...]) -> list[str]:
    conn = sqlite3.connect(":memory:")
    for statement in graph.MIGRATIONS[0]:
        conn.execute(statement)
    return [str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]


@pytest.mark.parametrize("count", [1, 8, 40])
def test_edges_touching_keys_seek_each_key_from_both_ends(count: int) -> None:
    steps = plan(graph._edges_touching(count), ("ws", *(f"k{i}" for i in range(count))))
    searches = [step for step in steps if step.startswith("SEARCH graph_edges")]
    assert len(searches) == 2, steps
    assert not any(WORKSPACE_SCAN in step for step in steps), steps
    assert "(workspace=? AND source=?)" in searches[0]
    assert "graph_edges_target (workspace=? AND target=?)" in searches[1]


@pytest.mark.parametrize("count", [1, 40])
def test_edges_between_pairs_seek_each_pair(count: int) -> None:
    params = ("ws", *(f"k{i}" for i in range(2 * count)))
    steps = plan(graph._edges_between(count), params)
    assert not any(WORKSPACE_SCAN in step for step in steps), steps
    assert any("(workspace=? AND source=? AND target=?)" in step for step in steps), steps


@pytest.mark.parametrize("count", [1, 40])
def test_degrees_seek_each_key_from_both_ends(count: int) -> None:
    steps = plan(graph._degrees(count), ("ws", *(f"k{i}" for i in range(count))))
    assert not any(WORKSPACE_SCAN in step for step in steps), steps
    assert any("(workspace=? AND source=?)" in step for step in steps), steps
    assert any("(workspace=? AND target=?)" in step for step in steps), steps
