from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from ragstream.cli import demo_data
from ragstream.cli.files import read_all
from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc
from tests.support.server import ServeProcess

DEMO_CORPUS = demo_data.CORPUS
WORKSPACE = "e2e"


def publish_and_wait(
    channel: grpc.Channel, workspace: str, corpus: Path
) -> list[common_pb2.DocumentStatus]:
    import time

    documents, _ = read_all([corpus])
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    published = stub.PublishDocuments(
        ingest_pb2.PublishDocumentsRequest(
            workspace=workspace,
            documents=[
                ingest_pb2.DocumentInput(doc_id=d.doc_id, content=d.content, file_path=d.doc_id)
                for d in documents
            ],
        )
    ).results
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        statuses = stub.GetDocumentStatus(
            ingest_pb2.GetDocumentStatusRequest(
                workspace=workspace, doc_ids=[r.doc_id for r in published]
            )
        ).documents
        progress = stub.GetIndexingProgress(ingest_pb2.GetIndexingProgressRequest())
        graph_done = (progress.pending_document_events, progress.pending_graph_merges) == (0, 0)
        if (
            graph_done
            and len(statuses) == len(published)
            and all(s.state == common_pb2.DOCUMENT_STATE_PROCESSED for s in statuses)
        ):
            return list(statuses)
        time.sleep(0.2)
    raise TimeoutError("corpus not indexed in time")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path_factory.mktemp("serve") / "data") as process:
        yield process


@pytest.fixture(scope="module")
def channel(server: ServeProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as ch:
        yield ch


@pytest.fixture(scope="module")
def indexed(channel: grpc.Channel) -> list[common_pb2.DocumentStatus]:
    return publish_and_wait(channel, WORKSPACE, DEMO_CORPUS)


DEMO_WORKSPACE = "demo"
"""The workspace `make demo` indexes the demo corpus into."""


@pytest.fixture(scope="session")
def demo_http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """A server with the HTTP/JSON port and console on, holding the demo corpus in
    workspace `demo`, as after `make demo` (shared by the HTTP and console tests)."""
    with ServeProcess(tmp_path_factory.mktemp("http") / "data", http=True) as process:
        with grpc.insecure_channel(process.address) as channel:
            publish_and_wait(channel, DEMO_WORKSPACE, DEMO_CORPUS)
        yield process
