"""`ragstream indexer` with `indexer.processes = 2` on the embedded bus: the second process
stops with the first, whether the first is stopped or killed."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.server import RagstreamProcess, indexer_members, running


def wait_for(condition: Callable[[], object], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def started(tmp_path: Path) -> tuple[RagstreamProcess, int]:
    env = {
        **os.environ,
        "RAGSTREAM_DATA_DIR": str(tmp_path / "data"),
        "RAGSTREAM_EMBEDDING__PROVIDER": "hash",
        "RAGSTREAM_INDEXER__PROCESSES": "2",
    }
    indexer = RagstreamProcess(env, tmp_path / "indexer.log", "indexer", "--health-listen")
    indexer.start()
    assert indexer.process is not None
    pid = indexer.process.pid
    wait_for(lambda: indexer_members(pid), 60, "the second indexer process")
    (member,) = indexer_members(pid)
    return indexer, member


def test_a_stopped_indexer_stops_its_second_process(tmp_path: Path) -> None:
    indexer, member = started(tmp_path)
    code, _ = indexer.terminate()
    assert code == 0
    assert not running(member)


def test_a_killed_indexers_second_process_exits_on_its_own(tmp_path: Path) -> None:
    indexer, member = started(tmp_path)
    try:
        indexer.kill()
        wait_for(lambda: not running(member), 30, "the orphaned second process to exit")
    finally:
        if running(member):
            os.kill(member, 9)
