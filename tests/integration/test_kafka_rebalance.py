"""Versions v1, v2 and v3 of one document, published while the consumer group rebalances
(a second indexer joins, then the first leaves): the document ends at v3."""

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
    dump,
    events,
    wait_until,
)
from tests.support.server import RagstreamProcess

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(150)]
TARGET = 999


def assignments(indexer: RagstreamProcess) -> int:
    return indexer.log().count("assigned partitions: [")


def test_versions_published_across_rebalances_end_at_the_last(
    kafka_broker: KafkaEndpoint, tmp_path: Path
) -> None:
    deployment = KafkaDeployment(kafka_broker.bootstrap, tmp_path / "data", partitions=4)
    first = deployment.indexer("first").start()
    second: RagstreamProcess | None = None
    try:
        wait_until(lambda: assignments(first) >= 1, 30, "the first indexer joining")
        fill = [document(i) for i in range(60)]
        asyncio.run(deployment.publish(events([*fill[:30], document(TARGET, version=1)])))
        second = deployment.indexer("second").start()  # joins: the group rebalances
        asyncio.run(deployment.publish(events([*fill[30:], document(TARGET, version=2)])))
        wait_until(lambda: assignments(first) >= 2, 30, "the rebalance for the second")
        first.terminate()  # leaves: the group rebalances again
        asyncio.run(deployment.publish(events([document(TARGET, version=3)])))

        def target_at_v3() -> bool:
            states = {d.doc_id: (d.version, d.state) for d in documents(deployment.data_dir)}
            return states.get(f"doc-{TARGET:04d}") == (3, DocState.PROCESSED) and len(states) == 61

        wait_until(target_at_v3, 60, "the document reaching v3")
        # v3 may reach a partition the second already owned before the first's leaving
        # finished rebalancing: its taking over the rest is awaited, not assumed.
        wait_until(lambda: assignments(second) >= 2, 60, "the second taking over the rest")
    finally:
        first.stop()
        if second is not None:
            second.stop()
    stored = dump(deployment.data_dir)
    chunk_ids = stored["documents"][f"doc-{TARGET:04d}"][-1]
    assert chunk_ids and all("of version 3." in stored["chunks"][c][0] for c in chunk_ids)
    assert stored["chunks_stored"] == len(stored["chunks"]), "no chunk of v1 or v2 is left"
