"""A 30-second store outage during an ingest: the indexer retries with backoff, never
commits past an event it has not processed, and processes everything once the store is back.

The outage is real: the test holds the SQLite database's write lock, so every write of the
indexer process waits and then fails with "database is locked", as it would against a store
that does not answer. Reads keep working (WAL), so the test reads the states meanwhile
through the connection that holds the lock.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragstream.common.bus.protocols import BusRecord
from ragstream.common.storage.sqlite.db import DB_FILE_NAME
from tests.support.kafka_indexer import (
    WORKSPACE,
    KafkaDeployment,
    document,
    events,
    group_offsets,
    processed,
    read_topic,
    wait_until,
)

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]
DOCS = 120
OUTAGE_S = 30.0


def processed_ids(conn: sqlite3.Connection) -> set[str]:
    rows = conn.execute(
        "SELECT doc_id FROM documents WHERE workspace = ? AND state = 'processed'", (WORKSPACE,)
    )
    return {doc_id for (doc_id,) in rows}


def committed_ids(published: list[BusRecord], committed: dict[int, int]) -> set[str]:
    """The documents whose events lie below the group's committed offsets."""
    return {r.key.split("/", 1)[1] for r in published if r.offset < committed.get(r.partition, 0)}


def lock_store(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    return conn


def test_store_outage_neither_commits_past_nor_loses_events(
    kafka_broker: KafkaEndpoint, tmp_path: Path
) -> None:
    deployment = KafkaDeployment(kafka_broker.bootstrap, tmp_path / "data", partitions=3)
    deployment.extra_env["RAGSTREAM_INDEXER__BATCH_SIZE"] = "8"
    indexer = deployment.indexer("only").start()
    try:
        asyncio.run(deployment.publish(events([document(i) for i in range(20)])))
        wait_until(lambda: processed(deployment.data_dir) >= 10, 60, "indexing under way")

        lock = lock_store(deployment.data_dir / DB_FILE_NAME)
        began = time.monotonic()  # the rest of the ingest arrives during the outage
        asyncio.run(deployment.publish(events([document(i) for i in range(20, DOCS)])))
        published = read_topic(deployment, deployment.topics.documents)
        samples = 0
        while time.monotonic() - began < OUTAGE_S:
            committed = committed_ids(published, group_offsets(deployment))
            assert committed <= processed_ids(lock), "committed past an unprocessed event"
            samples += 1
            time.sleep(1.0)
        assert len(processed_ids(lock)) <= 20
        lock.execute("ROLLBACK")
        lock.close()

        wait_until(lambda: processed(deployment.data_dir) == DOCS, 90, "recovery")
        wait_until(
            lambda: (
                committed_ids(published, group_offsets(deployment))
                == {f"doc-{i:04d}" for i in range(DOCS)}
            ),
            30,
            "every event committed",
        )
    finally:
        indexer.stop()
    assert samples >= 20
    assert "retrying" in indexer.log()
