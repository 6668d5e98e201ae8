"""What `ragstream ingest` and the publish APIs say became of each document: a file older
than a delete is indexed again (not silently ignored), an older file is named with the
--force hint, an unchanged one is named as such; over gRPC and HTTP, each publish result
says what the indexer will do with it. Also `delete` of unknown ids and `status` into a
pipe."""

from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc
from tests.support.server import ServeProcess, ragstream_cli

pytestmark = pytest.mark.e2e
HOUR_NS = 3600 * 10**9
LEADERSHIP = "Ingrid Halvorsen is the chief executive; Tomasz Brejcha leads engineering."
OUTCOME = ingest_pb2.PublishOutcome


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path_factory.mktemp("outcomes") / "data", http=True) as process:
        yield process


@pytest.fixture(scope="module")
def stub(served: ServeProcess) -> Iterator[ingest_pb2_grpc.IngestServiceStub]:
    with grpc.insecure_channel(served.address) as channel:
        yield ingest_pb2_grpc.IngestServiceStub(channel)


def set_back(path: Path, by_ns: int = HOUR_NS) -> int:
    """Moves the file's mtime back, as a restored backup has it; returns the new mtime."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - by_ns))
    return path.stat().st_mtime_ns


def status_of(
    stub: ingest_pb2_grpc.IngestServiceStub, workspace: str, doc_id: str, state: int
) -> common_pb2.DocumentStatus:
    """The document's status once it is in `state`."""
    request = ingest_pb2.GetDocumentStatusRequest(workspace=workspace, doc_ids=[doc_id])
    deadline = time.monotonic() + 60
    while True:
        found = list(stub.GetDocumentStatus(request).documents)
        if found and found[0].state == state:
            return found[0]
        assert time.monotonic() < deadline, f"{doc_id} never reached state {state}: {found}"
        time.sleep(0.1)


def post(served: ServeProcess, path: str, body: dict[str, Any]) -> Any:
    headers = {"Content-Type": "application/json"}
    data = json.dumps(body).encode()
    request = urllib.request.Request(f"http://{served.http_address}{path}", data, headers)
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_ingest_after_delete_indexes_the_older_file_again(
    served: ServeProcess, stub: ingest_pb2_grpc.IngestServiceStub, tmp_path: Path
) -> None:
    doc = tmp_path / "leadership-team.md"
    doc.write_text(LEADERSHIP, encoding="utf-8")
    mtime = set_back(doc)
    first = ragstream_cli(served, "ingest", str(doc), "--wait", "-w", "again")
    assert first.returncode == 0, first.stdout + first.stderr
    deleted = ragstream_cli(served, "delete", "leadership-team.md", "-w", "again")
    assert deleted.returncode == 0, deleted.stderr
    assert "published delete events for 1 documents" in deleted.stdout
    gone = status_of(stub, "again", "leadership-team.md", common_pb2.DOCUMENT_STATE_DELETED)
    assert gone.version > mtime  # the file is older than the delete

    result = ragstream_cli(served, "ingest", str(doc), "--wait", "-w", "again")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        "sending leadership-team.md again as a new version: the index held it as deleted"
        in result.stdout
    )
    assert "indexed 1, failed 0" in result.stdout
    back = status_of(stub, "again", "leadership-team.md", common_pb2.DOCUMENT_STATE_PROCESSED)
    assert back.version > gone.version and back.content_hash == sha256(LEADERSHIP)
    query = ragstream_cli(served, "query", "Who leads engineering?", "-m", "naive", "-w", "again")
    assert "Tomasz Brejcha" in query.stdout


def test_an_older_file_is_named_with_the_force_hint_and_force_indexes_it(
    served: ServeProcess, stub: ingest_pb2_grpc.IngestServiceStub, tmp_path: Path
) -> None:
    doc = tmp_path / "hull.md"
    doc.write_text("The Skua 3 hull is carbon fibre.", encoding="utf-8")
    assert ragstream_cli(served, "ingest", str(doc), "--wait", "-w", "older").returncode == 0
    doc.write_text("The Skua 3 hull is aluminium.", encoding="utf-8")
    set_back(doc)

    result = ragstream_cli(served, "ingest", str(doc), "--wait", "-w", "older")
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = [line for line in result.stderr.splitlines() if "hull.md" in line]
    assert "skipped hull.md: not indexed: the index holds a newer version" in line
    assert "`ragstream ingest --force` sends it as a new version" in line
    assert "indexed 0, failed 0, not indexed 1" in result.stdout
    kept = status_of(stub, "older", "hull.md", common_pb2.DOCUMENT_STATE_PROCESSED)
    assert kept.content_hash == sha256("The Skua 3 hull is carbon fibre.")

    forced = ragstream_cli(served, "ingest", str(doc), "--wait", "--force", "-w", "older")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "sending hull.md again as a new version: --force" in forced.stdout
    assert "indexed 1, failed 0" in forced.stdout
    now = status_of(stub, "older", "hull.md", common_pb2.DOCUMENT_STATE_PROCESSED)
    assert now.content_hash == sha256("The Skua 3 hull is aluminium.")


def test_an_unchanged_file_is_named_unchanged(served: ServeProcess, tmp_path: Path) -> None:
    doc = tmp_path / "tern.md"
    doc.write_text("The Tern S3 measures salinity.", encoding="utf-8")
    assert ragstream_cli(served, "ingest", str(doc), "--wait", "-w", "same").returncode == 0
    again = ragstream_cli(served, "ingest", str(doc), "--wait", "-w", "same")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "unchanged tern.md: the index holds this content already" in again.stdout
    assert "indexed 1, failed 0" in again.stdout


def test_publish_results_say_what_the_indexer_will_do_over_grpc_and_http(
    served: ServeProcess, stub: ingest_pb2_grpc.IngestServiceStub
) -> None:
    def publish(content: str, version: int) -> ingest_pb2.PublishResult:
        document = ingest_pb2.DocumentInput(doc_id="memo", content=content, version=version)
        request = ingest_pb2.PublishDocumentsRequest(workspace="api", documents=[document])
        [result] = stub.PublishDocuments(request).results
        return result

    first = publish("Bulwark memo.", 100)
    assert (first.outcome, first.stored_version) == (OUTCOME.PUBLISH_OUTCOME_ACCEPTED, 0)
    status_of(stub, "api", "memo", common_pb2.DOCUMENT_STATE_PROCESSED)
    for content, version, outcome in [
        ("Bulwark memo.", 100, OUTCOME.PUBLISH_OUTCOME_DUPLICATE),
        ("Bulwark memo.", 90, OUTCOME.PUBLISH_OUTCOME_DUPLICATE),
        ("Another memo.", 90, OUTCOME.PUBLISH_OUTCOME_STALE),
        ("Another memo.", 100, OUTCOME.PUBLISH_OUTCOME_STALE),
    ]:
        result = publish(content, version)
        assert (result.outcome, result.stored_version) == (outcome, 100), (content, version)

    delete = ingest_pb2.DeleteDocumentsRequest(workspace="api", doc_ids=["memo", "never"])
    deleted, unknown = stub.DeleteDocuments(delete).results
    assert deleted.outcome == OUTCOME.PUBLISH_OUTCOME_ACCEPTED
    assert unknown.outcome == OUTCOME.PUBLISH_OUTCOME_NOT_FOUND
    gone = status_of(stub, "api", "memo", common_pb2.DOCUMENT_STATE_DELETED)
    late = publish("Bulwark memo.", 100)
    assert (late.outcome, late.stored_version) == (OUTCOME.PUBLISH_OUTCOME_DELETED, gone.version)

    def body(version: int) -> dict[str, Any]:
        document = {"docId": "memo", "content": "Memo.", "version": str(version)}
        return {"workspace": "api", "documents": [document]}

    [over_http] = post(served, "/v1/documents", body(5))["results"]
    assert over_http["outcome"] == "PUBLISH_OUTCOME_DELETED"
    assert int(over_http["storedVersion"]) == gone.version
    [newer] = post(served, "/v1/documents", body(gone.version + 1))["results"]
    assert newer["outcome"] == "PUBLISH_OUTCOME_ACCEPTED"
    deletes = post(served, "/v1/documents/delete", {"workspace": "api", "docIds": ["never"]})
    assert [r["outcome"] for r in deletes["results"]] == ["PUBLISH_OUTCOME_NOT_FOUND"]


def test_delete_names_unknown_and_deleted_ids_and_exits_1(
    served: ServeProcess, tmp_path: Path
) -> None:
    doc = tmp_path / "known.md"
    doc.write_text("The Gannet Fleet dashboard shows every drone.", encoding="utf-8")
    assert ragstream_cli(served, "ingest", str(doc), "--wait", "-w", "del").returncode == 0
    result = ragstream_cli(served, "delete", "known.md", "nope.md", "-w", "del")
    assert result.returncode == 1
    assert "published delete events for 1 documents" in result.stdout
    assert (
        "not deleted nope.md: unknown document: workspace 'del' holds no document of this id"
        in result.stderr
    )
    assert "known.md" not in result.stderr
    only_unknown = ragstream_cli(served, "delete", "nope.md", "-w", "del")
    assert only_unknown.returncode == 1 and "published" not in only_unknown.stdout


def test_status_into_a_pipe_prints_whole_ids_and_json_on_request(
    served: ServeProcess, tmp_path: Path
) -> None:
    name = "quarterly-report-of-the-subsea-inspection-fleet-" + "x" * 60 + ".md"
    (tmp_path / name).write_text("Fleet report: 41 inspections.", encoding="utf-8")
    assert ragstream_cli(served, "ingest", str(tmp_path), "--wait", "-w", "wide").returncode == 0
    piped = ragstream_cli(served, "status", "-w", "wide", columns=80)
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.splitlines()
    assert lines[0].split("\t") == [
        "doc_id",
        "state",
        "chunks",
        "entities",
        "relations",
        "ms",
        "error",
    ]
    assert lines[1].split("\t")[:3] == [name, "processed", "1"]
    as_json = ragstream_cli(served, "status", "-w", "wide", "--json", columns=80)
    printed = json.loads(as_json.stdout)
    assert [d["docId"] for d in printed["documents"]] == [name]
    assert printed["documents"][0]["state"] == "DOCUMENT_STATE_PROCESSED"
    assert printed["queued"] == {"documentEvents": 0, "graphMerges": 0}
