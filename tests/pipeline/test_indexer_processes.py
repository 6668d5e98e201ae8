"""Indexing in two processes on the embedded bus (`indexer.processes = 2`): the stores end
as one process leaves them, the second process does its share, and a member that dies is
started again without losing its partitions' events."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ragstream.common.config import Settings
from ragstream.testing.openai_server import OpenAITestServer
from tests.pipeline.test_graph_indexing import WS, change, corpus_events
from tests.pipeline.test_llm_costs import responder
from tests.support.pipeline import embedded_settings, running_pipeline
from tests.support.server import indexer_members

PARTS = ("documents", "chunks", "entities", "relations", "nodes", "edges", "mentions")


def committed_partitions(data_dir: Path) -> set[int]:
    """The partitions of the documents topic whose offsets stage 1 committed."""
    with contextlib.closing(sqlite3.connect(data_dir / "ragstream.db")) as conn:
        rows = conn.execute(
            "SELECT partition FROM bus_offsets WHERE topic LIKE '%.documents' AND offset > 0 "
            "AND group_id = 'ragstream-indexer'"
        ).fetchall()
    return {row[0] for row in rows}


async def index(settings: Settings) -> tuple[dict[str, Any], dict[str, Any]]:
    async with running_pipeline(settings) as pipeline:
        await pipeline.publish(corpus_events())
        await pipeline.idle()
        dump = await pipeline.dump(WS)
        communities = {
            r.id: (r.level, r.members, r.report)
            for r in await pipeline.backends.stores.communities.list(WS)
        }
    return dump, communities


async def test_two_processes_write_what_one_process_writes(tmp_path: Path) -> None:
    async with OpenAITestServer(responder=responder) as llm:
        extra = {"llm": {"provider": "openai", "model": "m", "base_url": llm.base_url}}
        runs = {}
        for processes in (1, 2):
            data_dir = tmp_path / str(processes)
            settings = embedded_settings(data_dir, indexer={"processes": processes}, **extra)
            runs[processes] = await index(settings)
            if processes == 2:
                assert committed_partitions(data_dir) & {1, 3, 5}, "member 1 indexed nothing"
    (one, one_communities), (two, two_communities) = runs[1], runs[2]
    assert one["entities"] and one["relations"] and one_communities
    for part in PARTS:
        assert two[part] == one[part], part
    assert two_communities == one_communities


async def test_a_member_that_dies_is_started_again_and_its_events_indexed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    settings = embedded_settings(tmp_path, indexer={"processes": 2})
    async with running_pipeline(settings) as pipeline:
        async with asyncio.timeout(60):
            while not indexer_members():  # noqa: ASYNC110 - a child process signals nothing
                await asyncio.sleep(0.05)
        (pid,) = indexer_members()
        os.kill(pid, signal.SIGKILL)
        events = [
            change(f"doc-{i}", 1, f"Mira Okafor visited Bergen {i} times.") for i in range(12)
        ]
        await pipeline.publish(events)
        await pipeline.idle()
        documents = (await pipeline.dump(WS))["documents"]
        (restarted,) = indexer_members()
    assert len(documents) == 12
    assert restarted != pid
    assert "indexer process 1 of 2 exited with code -9" in caplog.text
    assert committed_partitions(tmp_path) & {1, 3, 5}
    assert indexer_members() == []  # stopped with the pipeline
