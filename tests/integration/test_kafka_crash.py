"""Two `ragstream indexer` processes in one consumer group; one is killed with kill -9 in the
middle of the ingest and restarted. The stores end exactly as after a clean run of a single
process over the same events: nothing lost, nothing applied twice. Runs over SASL_SSL, as a
production cluster is reached (the restarted process logs in again); the other Kafka tests
cover PLAINTEXT, and the crash contract does not depend on the listener."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.kafka_indexer import (
    KafkaDeployment,
    document,
    dump,
    events,
    group_offsets,
    processed,
    read_topic,
    wait_until,
)
from tests.support.kafka_secured import KafkaListener, SecuredListeners
from tests.support.server import RagstreamProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]
DOCS = 500
CHANGES = [document(i) for i in range(DOCS)]


def all_processed(deployment: KafkaDeployment) -> bool:
    return processed(deployment.data_dir) == DOCS


def fully_committed(deployment: KafkaDeployment) -> bool:
    """The group's commits reached the end of every partition of the document topic."""
    ends: dict[int, int] = {}
    for record in read_topic(deployment, deployment.topics.documents):
        ends[record.partition] = max(ends.get(record.partition, 0), record.offset + 1)
    return group_offsets(deployment) == ends


def clean_run(listener: KafkaListener, data_dir: Path) -> dict[str, Any]:
    deployment = KafkaDeployment.on(listener, data_dir)
    indexer = deployment.indexer("single").start()
    try:
        asyncio.run(deployment.publish(events(CHANGES)))
        wait_until(lambda: all_processed(deployment), 120, "the clean run")
        wait_until(lambda: fully_committed(deployment), 30, "the clean run's commits")
        assert indexer.terminate()[0] == 0
    finally:
        indexer.stop()
    return dump(data_dir)


def assigned(indexer: RagstreamProcess) -> bool:
    return "assigned partitions: [(" in indexer.log()


def test_kill_minus_nine_of_one_indexer_in_two_loses_and_doubles_nothing(
    secured_listeners: SecuredListeners, tmp_path: Path
) -> None:
    kafka_listener = secured_listeners.sasl_ssl()
    expected = clean_run(kafka_listener, tmp_path / "clean")
    assert len(expected["documents"]) == DOCS
    assert expected["chunks_stored"] == len(expected["chunks"]) > 0

    deployment = KafkaDeployment.on(kafka_listener, tmp_path / "crash")
    first = deployment.indexer("first").start()
    second = deployment.indexer("second").start()
    restarted: RagstreamProcess | None = None
    try:
        wait_until(lambda: assigned(first) and assigned(second), 30, "both indexers joining")
        asyncio.run(deployment.publish(events(CHANGES)))
        wait_until(lambda: processed(deployment.data_dir) >= DOCS // 5, 60, "a fifth indexed")
        first.kill()
        at_crash = processed(deployment.data_dir)
        assert at_crash < DOCS, "the crash must land in the middle of the ingest"

        restarted = deployment.indexer("restarted").start()
        wait_until(lambda: all_processed(deployment), 150, "every document indexed")
        wait_until(lambda: fully_committed(deployment), 30, "every event committed")
        assert second.terminate()[0] == 0
        assert restarted.terminate()[0] == 0
    finally:
        for process in (first, second, restarted):
            if process is not None:
                process.stop()
    assert dump(deployment.data_dir) == expected
