"""GetIndexingProgress per workspace, on `serve --no-indexer` with auth: with no indexer the
published events stay queued, so each workspace's count is exactly what was published to it.
A token sees its own workspace's backlog only; a "*" token also gets the total (an empty
workspace); `ragstream status` prints the workspace's count."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import grpc
import pytest

from ragstream.query.transport.auth import token_digest
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc
from tests.support.server import RagstreamProcess

pytestmark = pytest.mark.e2e
ALPHA, ADMIN = "tok-alpha-progress-5d21", "tok-admin-progress-9e03"
PUBLISHED = {"alpha": 3, "beta": 2}


def auth(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RagstreamProcess]:
    root = tmp_path_factory.mktemp("progress")
    tokens = root / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "alpha"\nsha256 = "{token_digest(ALPHA)}"\nworkspaces = ["alpha"]\n'
        f'[[tokens]]\nname = "admin"\nsha256 = "{token_digest(ADMIN)}"\nworkspaces = ["*"]\n'
    )
    env = {
        **os.environ,
        "RAGSTREAM_EMBEDDING__PROVIDER": "hash",
        "RAGSTREAM_AUTH__ENABLED": "true",
        "RAGSTREAM_AUTH__TOKENS_FILE": str(tokens),
    }
    args = ("serve", "--no-indexer", "--data-dir", str(root / "data"), "--listen")
    process = RagstreamProcess(env, root / "serve.log", *args).start()
    try:
        with grpc.insecure_channel(process.address) as channel:
            stub = ingest_pb2_grpc.IngestServiceStub(channel)
            for workspace, count in PUBLISHED.items():
                documents = [
                    ingest_pb2.DocumentInput(doc_id=f"d{n}", content=f"text {n}")
                    for n in range(count)
                ]
                request = ingest_pb2.PublishDocumentsRequest(
                    workspace=workspace, documents=documents
                )
                stub.PublishDocuments(request, metadata=auth(ADMIN))
        yield process
    finally:
        process.stop()


def progress(server: RagstreamProcess, workspace: str, token: str) -> tuple[int, int]:
    with grpc.insecure_channel(server.address) as channel:
        reply = ingest_pb2_grpc.IngestServiceStub(channel).GetIndexingProgress(
            ingest_pb2.GetIndexingProgressRequest(workspace=workspace), metadata=auth(token)
        )
    return reply.pending_document_events, reply.pending_graph_merges


def test_a_token_gets_its_workspaces_backlog_only(server: RagstreamProcess) -> None:
    assert progress(server, "alpha", ALPHA) == (3, 0)
    with pytest.raises(grpc.RpcError) as denied:
        progress(server, "beta", ALPHA)
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as total:
        progress(server, "", ALPHA)
    assert total.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "'*'" in (total.value.details() or "")


def test_a_wildcard_token_gets_each_workspace_and_the_total(server: RagstreamProcess) -> None:
    assert progress(server, "alpha", ADMIN) == (3, 0)
    assert progress(server, "beta", ADMIN) == (2, 0)
    assert progress(server, "gamma", ADMIN) == (0, 0)
    assert progress(server, "", ADMIN) == (5, 0)


def test_status_prints_the_workspaces_backlog(server: RagstreamProcess) -> None:
    command = [sys.executable, "-m", "ragstream.cli.main", "status", "-w", "alpha"]
    done = subprocess.run(
        [*command, "--server", server.address],
        env={**os.environ, "RAGSTREAM_TOKEN": ALPHA, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "queued: 3 document events, 0 knowledge-graph merges" in done.stdout
