"""SIGTERM to `ragstream indexer` in the middle of an ingest: it stops fetching, finishes the
batch in flight, commits it and exits within 10 s; what it processed is exactly what it
committed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ragstream.common.models import DocState
from tests.support.kafka_indexer import (
    KafkaDeployment,
    document,
    documents,
    events,
    group_offsets,
    processed,
    read_topic,
    wait_until,
)

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
DOCS = 300


def test_sigterm_mid_ingest_exits_in_time_having_committed_what_it_processed(
    kafka_broker: KafkaEndpoint, tmp_path: Path
) -> None:
    deployment = KafkaDeployment(kafka_broker.bootstrap, tmp_path / "data", partitions=3)
    asyncio.run(deployment.publish(events([document(i) for i in range(DOCS)])))
    indexer = deployment.indexer("only").start()
    try:
        wait_until(lambda: processed(deployment.data_dir) >= 20, 60, "indexing under way")
        code, seconds = indexer.terminate()
    finally:
        indexer.stop()
    assert code == 0, indexer.log()
    assert seconds < 10
    assert "indexer stopped" in indexer.log()

    committed = group_offsets(deployment)
    published = read_topic(deployment, deployment.topics.documents)
    below = {r.key.split("/", 1)[1] for r in published if r.offset < committed.get(r.partition, 0)}
    done = {d.doc_id for d in documents(deployment.data_dir) if d.state == DocState.PROCESSED}
    assert 0 < len(done) < DOCS, "the stop must land in the middle of the ingest"
    assert done == below
