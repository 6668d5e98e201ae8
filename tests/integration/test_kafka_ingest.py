"""The producers of the distributed deployment: `ragstream ingest --bus kafka` and the gRPC
IngestService of `ragstream serve --no-indexer` publish to Kafka, and `ragstream indexer`
indexes what they published."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
import pytest

from ragstream.common.events import CE_TYPE_DELETED, CE_TYPE_UPSERTED
from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc
from tests.support.kafka_indexer import WORKSPACE, KafkaDeployment, read_topic

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def write_corpus(root: Path) -> None:
    (root / "notes").mkdir(parents=True)
    (root / "harbour.md").write_text("The harbour crane lifts containers at dawn.\n")
    (root / "notes" / "salinity.txt").write_text("Salinity at station four rose in May.\n")
    (root / "notes" / "empty.txt").write_text("")


def states(stub: ingest_pb2_grpc.IngestServiceStub, doc_ids: list[str]) -> dict[str, int]:
    request = ingest_pb2.GetDocumentStatusRequest(workspace=WORKSPACE, doc_ids=doc_ids)
    return {s.doc_id: s.state for s in stub.GetDocumentStatus(request).documents}


def wait_for_states(
    stub: ingest_pb2_grpc.IngestServiceStub, wanted: dict[str, int], timeout_s: float = 60
) -> None:
    deadline = time.monotonic() + timeout_s
    while states(stub, list(wanted)) != wanted:
        assert time.monotonic() < deadline, f"{states(stub, list(wanted))} != {wanted}"
        time.sleep(0.2)


def test_cli_and_grpc_ingest_publish_to_kafka_and_the_indexer_indexes(
    kafka_broker: KafkaEndpoint, tmp_path: Path
) -> None:
    deployment = KafkaDeployment(kafka_broker.bootstrap, tmp_path / "data")
    write_corpus(tmp_path / "corpus")
    indexer = deployment.indexer("indexer").start()
    server = deployment.server("serve").start()
    try:
        command = ["ingest", str(tmp_path / "corpus"), "--bus", "kafka", "--workspace", WORKSPACE]
        command += ["--wait", "--timeout", "60", "--server", server.address]
        ingest = subprocess.run(
            [sys.executable, "-m", "ragstream.cli.main", *command],
            env=deployment.env(),
            capture_output=True,
            text=True,
            timeout=90,
            check=False,
        )
        out, err = (text.replace("\n", "") for text in (ingest.stdout, ingest.stderr))
        assert ingest.returncode == 1, err  # the empty file was skipped
        assert "empty.txt: empty file" in err
        assert f"published 2 documents to {deployment.topics.documents}" in out
        assert "indexed 2, failed 0" in out

        with grpc.insecure_channel(server.address) as channel:
            stub = ingest_pb2_grpc.IngestServiceStub(channel)
            stub.PublishDocuments(
                ingest_pb2.PublishDocumentsRequest(
                    workspace=WORKSPACE,
                    documents=[ingest_pb2.DocumentInput(doc_id="api", content="Tide tables.")],
                )
            )
            processed = common_pb2.DOCUMENT_STATE_PROCESSED
            wait_for_states(stub, {"harbour.md": processed, "api": processed})
            stub.DeleteDocuments(
                ingest_pb2.DeleteDocumentsRequest(workspace=WORKSPACE, doc_ids=["api"])
            )
            wait_for_states(stub, {"api": common_pb2.DOCUMENT_STATE_DELETED})
    finally:
        server.stop()
        indexer.stop()
    published = read_topic(deployment, deployment.topics.documents)
    assert sorted(r.key for r in published) == [
        f"{WORKSPACE}/api",
        f"{WORKSPACE}/api",
        f"{WORKSPACE}/harbour.md",
        f"{WORKSPACE}/notes/salinity.txt",
    ]
    kinds = [r.header("ce_type") for r in published if r.key == f"{WORKSPACE}/api"]
    assert kinds == [CE_TYPE_UPSERTED, CE_TYPE_DELETED]
    assert all(r.header("content-type") == b"application/protobuf" for r in published)


def kafka_ingest(
    deployment: KafkaDeployment, server: str, path: Path, *options: str
) -> subprocess.CompletedProcess[str]:
    command = ["ingest", str(path), "--bus", "kafka", "--workspace", WORKSPACE, *options]
    return subprocess.run(
        [sys.executable, "-m", "ragstream.cli.main", *command, "--server", server],
        env={**deployment.env(), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


def test_kafka_ingest_after_a_delete_names_the_file_and_force_indexes_it(
    kafka_broker: KafkaEndpoint, tmp_path: Path
) -> None:
    """The bus cannot say at publish time that a file older than a delete will be ignored:
    the wait's final status does, by name, and --force sends it as a new version."""
    deployment = KafkaDeployment(kafka_broker.bootstrap, tmp_path / "data")
    doc = tmp_path / "crane.md"
    doc.write_text("The harbour crane lifts containers at dawn.\n")
    stat = doc.stat()
    os.utime(doc, ns=(stat.st_atime_ns, stat.st_mtime_ns - 3600 * 10**9))
    indexer = deployment.indexer("indexer").start()
    server = deployment.server("serve").start()
    try:
        first = kafka_ingest(deployment, server.address, doc, "--wait", "--timeout", "60")
        assert first.returncode == 0, first.stdout + first.stderr
        with grpc.insecure_channel(server.address) as channel:
            stub = ingest_pb2_grpc.IngestServiceStub(channel)
            request = ingest_pb2.DeleteDocumentsRequest(workspace=WORKSPACE, doc_ids=["crane.md"])
            stub.DeleteDocuments(request)
            wait_for_states(stub, {"crane.md": common_pb2.DOCUMENT_STATE_DELETED})

            again = kafka_ingest(deployment, server.address, doc, "--wait", "--timeout", "60")
            assert again.returncode == 1, again.stdout + again.stderr
            [line] = [line for line in again.stderr.splitlines() if "crane.md" in line]
            assert "skipped crane.md: not indexed: deleted by a newer delete" in line
            assert "`ragstream ingest --force` sends it as a new version" in line
            assert "indexed 0, failed 0, not indexed 1" in again.stdout
            assert states(stub, ["crane.md"]) == {"crane.md": common_pb2.DOCUMENT_STATE_DELETED}

            forced = kafka_ingest(deployment, server.address, doc, "--wait", "--force")
            assert forced.returncode == 0, forced.stdout + forced.stderr
            assert "indexed 1, failed 0" in forced.stdout
            assert states(stub, ["crane.md"]) == {"crane.md": common_pb2.DOCUMENT_STATE_PROCESSED}
    finally:
        server.stop()
        indexer.stop()
