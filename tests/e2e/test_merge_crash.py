"""kill -9 of `ragstream serve` in the middle of a large graph merge, then a restart.

Stage 2 commits each batch (one poll of the graph-merge topic) as soon as it is applied to
every store, so the restart redoes at most the one batch that was in flight, and the stores
end exactly as an uninterrupted run leaves them.
"""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path
from typing import Any

import pytest

from ragstream.common.bus.sqlite_log import SqliteEventLog
from ragstream.common.bus.topics import Topics, merge_group
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange, encode
from ragstream.common.registry import open_backends
from ragstream.common.storage.sqlite.db import Database
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
WS = "crash"
DOCS = 30
BATCH = 100
"""indexer.merge_batch_size: the 30 documents queue about 3,200 merges, some 32 batches."""
MERGING = re.compile(r"merging \d+ keys from \S+\[0\]@(\d+)\.\.(\d+)")
FIRST = ("Helga", "Olaf", "Marta", "Tomas", "Ingrid", "Pavel", "Sofia", "Anton")
LAST = tuple(a + b for a in ("Mar", "Tor", "Vel", "Ash", "Bri", "Cal", "Dun", "Eld")
             for b in ("wick", "ston", "ford", "holm"))  # fmt: skip
PLACES = tuple(a + b for a in ("North", "South", "Iron", "Salt", "Stone")
               for b in ("haven", "bridge", "moor"))  # fmt: skip


def document(i: int) -> DocumentChange:
    """Twelve paragraphs, each naming two of 256 people and one of 15 places."""
    paragraphs = []
    for p in range(12):
        n = i * 12 + p
        a, b = f"{FIRST[n % 8]} {LAST[n % 32]}", f"{FIRST[n // 8 % 8]} {LAST[(n * 7 + 3) % 32]}"
        place = PLACES[n % 15]
        paragraphs.append(
            f"{a} met {b} in {place} during the survey of {1900 + n}. "
            f"{b} later wrote to {a} about {place} Harbour."
        )
    doc_id = f"doc-{i:03d}"
    return DocumentChange(WS, doc_id, 1, False, "\n\n".join(paragraphs), doc_id)


def settings(data_dir: Path) -> Settings:
    """What `ServeProcess` with ENV runs: the hashed embedder, offline extraction, and topics
    of one partition (so that one committed offset tells how far stage 2 got)."""
    return embedded_settings(
        data_dir,
        embedding={"provider": "hash"},
        indexer={"merge_batch_size": BATCH},
        bus={"partitions": 1},
    )


ENV = {"RAGSTREAM_INDEXER__MERGE_BATCH_SIZE": str(BATCH), "RAGSTREAM_BUS__PARTITIONS": "1"}


def started_batches(log: str) -> list[tuple[int, int]]:
    """(first, last) offset of every merge batch the log says was started, in order."""
    return [(int(m[1]), int(m[2])) for m in MERGING.finditer(log)]


async def uninterrupted(data_dir: Path, events: list[DocumentChange]) -> dict[str, Any]:
    async with running_pipeline(settings(data_dir)) as pipeline:
        await pipeline.publish(events)
        await pipeline.idle(timeout_s=300)
        return await pipeline.dump(WS)


async def publish(data_dir: Path, events: list[DocumentChange]) -> None:
    """The events on the embedded log before any indexer runs (the same bytes as above)."""
    async with open_backends(settings(data_dir)) as backends:
        await backends.bus.publisher.publish(backends.topics.documents, [encode(e) for e in events])


async def merge_offsets(data_dir: Path) -> tuple[int, int]:
    """(committed, end) offset of the graph-merge topic for stage 2's group."""
    cfg, topic = settings(data_dir), Topics().graph_merge
    async with await Database.open(data_dir) as db:
        bus = await SqliteEventLog.open(db)
        committed = await bus.committed(merge_group(cfg.bus.group_id), [topic])
        end = await bus.end_offsets([topic])
    return committed[(topic, 0)], end[topic]


async def dump(data_dir: Path) -> dict[str, Any]:
    cfg = settings(data_dir)
    async with open_backends(cfg) as backends:
        return await Pipeline(backends, cfg).dump(WS)


def wait_for_batches(server: ServeProcess, count: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while len(started_batches(server.log())) < count:
        assert time.monotonic() < deadline, f"no {count} merge batches:\n{server.log()[-3000:]}"
        time.sleep(0.02)


def test_kill_minus_nine_mid_merge_redoes_at_most_one_batch(tmp_path: Path) -> None:
    events = [document(i) for i in range(DOCS)]
    clean = asyncio.run(uninterrupted(tmp_path / "clean", events))

    data_dir = tmp_path / "data"
    asyncio.run(publish(data_dir, events))
    server = ServeProcess(data_dir, ENV).start()
    wait_for_batches(server, 6)
    server.kill()
    before = started_batches(server.log())
    committed, end = asyncio.run(merge_offsets(data_dir))
    # Early polls can be short while stage 1 still publishes, so only the remainder is sure.
    assert committed > 0 and end - committed >= 5 * BATCH, "the kill must land mid-merge"
    redone = before[-1][1] + 1 - committed
    assert 0 <= redone <= BATCH, f"{redone} merges applied before the kill but not committed"

    server = ServeProcess(data_dir, ENV).start()
    try:
        restart = len(before)
        wait_for_batches(server, restart + 1)
        deadline = time.monotonic() + 120
        while asyncio.run(merge_offsets(data_dir))[0] < end:
            assert time.monotonic() < deadline, "the restarted indexer did not finish merging"
            time.sleep(0.2)
        after = started_batches(server.log())[restart:]
    finally:
        assert server.stop() == 0
    assert after[0][0] == committed, "the restart resumes at the committed offset"
    replayed = asyncio.run(dump(data_dir))
    assert clean["entities"] and clean["relations"]
    for part in ("documents", "chunks", "entities", "relations", "nodes", "edges", "mentions"):
        assert replayed[part] == clean[part], part
