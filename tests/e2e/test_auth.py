"""Bearer tokens and workspaces against a running `ragstream serve` with auth enabled.

Both workspaces hold identical documents, so any leak across them would look like success:
each RPC is tried for the granted workspace (it must answer with content) and for the other
one (it must be PERMISSION_DENIED).
"""

import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ragstream.query.transport.auth import token_digest
from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc
from tests.support import http_json
from tests.support.raw import UNDECODABLE, raw_error
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
ALPHA, BETA, ADMIN = "tok-alpha-93c1d0", "tok-beta-5b7e22", "tok-admin-0f4a8c"
DOCS = {
    "recall.md": "The Tern S3 drone was recalled in 2024 because its battery seals failed.",
    "seals.md": "Kestrel Polymers made the battery seals used in the Tern S3 drone.",
}
QUESTION = "Who made the battery seals of the Tern S3?"


def auth(token: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {token}"),)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    root = tmp_path_factory.mktemp("auth")
    tokens = root / "tokens.toml"
    tokens.write_text(
        f"""
[[tokens]]
name = "alpha"
sha256 = "{token_digest(ALPHA)}"
workspaces = ["alpha"]

[[tokens]]
name = "beta"
sha256 = "{token_digest(BETA)}"
workspaces = ["beta"]

[[tokens]]
name = "admin"
token = "{ADMIN}"
workspaces = ["*"]
"""
    )
    env = {"RAGSTREAM_AUTH__ENABLED": "true", "RAGSTREAM_AUTH__TOKENS_FILE": str(tokens)}
    with ServeProcess(root / "data", env, http=True) as process:
        yield process


@pytest.fixture(scope="module")
def indexed(channel: grpc.Channel) -> None:
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    for workspace, token in (("alpha", ALPHA), ("beta", BETA)):
        documents = [ingest_pb2.DocumentInput(doc_id=d, content=c) for d, c in DOCS.items()]
        request = ingest_pb2.PublishDocumentsRequest(workspace=workspace, documents=documents)
        stub.PublishDocuments(request, metadata=auth(token))
    deadline = time.monotonic() + 120
    for workspace, token in (("alpha", ALPHA), ("beta", BETA)):
        while True:
            request_ = ingest_pb2.GetDocumentStatusRequest(workspace=workspace, doc_ids=list(DOCS))
            statuses = stub.GetDocumentStatus(request_, metadata=auth(token)).documents
            if len(statuses) == len(DOCS) and all(
                s.state == common_pb2.DOCUMENT_STATE_PROCESSED for s in statuses
            ):
                break
            assert time.monotonic() < deadline, "documents not indexed in time"
            time.sleep(0.2)


Read = Callable[[grpc.Channel, str, str], Any]


def query(channel: grpc.Channel, workspace: str, token: str) -> Any:
    request = query_pb2.QueryRequest(workspace=workspace, query=QUESTION)
    response = query_pb2_grpc.QueryServiceStub(channel).Query(request, metadata=auth(token))
    return [c.doc_id for c in response.context.chunks]


def stream_query(channel: grpc.Channel, workspace: str, token: str) -> Any:
    request = query_pb2.StreamQueryRequest(workspace=workspace, query=QUESTION)
    events = query_pb2_grpc.QueryServiceStub(channel).StreamQuery(request, metadata=auth(token))
    return [c.doc_id for e in events if e.HasField("context") for c in e.context.context.chunks]


def retrieve(channel: grpc.Channel, workspace: str, token: str) -> Any:
    request = query_pb2.RetrieveRequest(workspace=workspace, query=QUESTION)
    response = query_pb2_grpc.QueryServiceStub(channel).Retrieve(request, metadata=auth(token))
    return [c.doc_id for c in response.context.chunks]


def status(channel: grpc.Channel, workspace: str, token: str) -> Any:
    request = ingest_pb2.GetDocumentStatusRequest(workspace=workspace, doc_ids=list(DOCS))
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    return [
        (d.workspace, d.doc_id)
        for d in stub.GetDocumentStatus(request, metadata=auth(token)).documents
    ]


def listing(channel: grpc.Channel, workspace: str, token: str) -> Any:
    request = ingest_pb2.ListDocumentsRequest(workspace=workspace)
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    return [
        (d.workspace, d.doc_id) for d in stub.ListDocuments(request, metadata=auth(token)).documents
    ]


def publish(channel: grpc.Channel, workspace: str, token: str) -> Any:
    document = ingest_pb2.DocumentInput(doc_id="extra.md", content="An extra note.")
    request = ingest_pb2.PublishDocumentsRequest(workspace=workspace, documents=[document])
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    return [r.doc_id for r in stub.PublishDocuments(request, metadata=auth(token)).results]


def delete(channel: grpc.Channel, workspace: str, token: str) -> Any:
    request = ingest_pb2.DeleteDocumentsRequest(workspace=workspace, doc_ids=["extra.md"])
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    return [r.doc_id for r in stub.DeleteDocuments(request, metadata=auth(token)).results]


READS: list[Read] = [query, stream_query, retrieve, status, listing]
WRITES: list[Read] = [publish, delete]


def code_of(call: Callable[..., Any], *args: Any) -> grpc.StatusCode:
    try:
        call(*args)
    except grpc.RpcError as error:
        assert isinstance(error, grpc.Call)
        return error.code()
    return grpc.StatusCode.OK


@pytest.mark.parametrize("read", READS, ids=lambda r: r.__name__)
def test_a_token_reads_its_workspace_and_nothing_else(
    channel: grpc.Channel, indexed: None, read: Read
) -> None:
    for workspace, own, other in (("alpha", ALPHA, BETA), ("beta", BETA, ALPHA)):
        granted = read(channel, workspace, own)
        assert granted, f"{read.__name__} on {workspace} returned nothing"
        if isinstance(granted[0], tuple):
            assert {ws for ws, _ in granted} == {workspace}
        denied = code_of(read, channel, workspace, other)
        assert denied == grpc.StatusCode.PERMISSION_DENIED
        # An unnamed workspace is the server's default one, which neither token grants.
        assert code_of(read, channel, "", own) == grpc.StatusCode.PERMISSION_DENIED


@pytest.mark.parametrize("write", WRITES, ids=lambda w: w.__name__)
def test_a_token_cannot_change_another_workspace(
    channel: grpc.Channel, indexed: None, write: Read
) -> None:
    assert code_of(write, channel, "beta", ALPHA) == grpc.StatusCode.PERMISSION_DENIED
    assert write(channel, "alpha", ALPHA) == ["extra.md"]


def test_a_wildcard_token_reads_every_workspace(channel: grpc.Channel, indexed: None) -> None:
    for workspace in ("alpha", "beta"):
        assert sorted(retrieve(channel, workspace, ADMIN)) != []
        assert {ws for ws, _ in listing(channel, workspace, ADMIN)} == {workspace}


@pytest.mark.parametrize(
    "metadata",
    [(), (("authorization", "Bearer wrong-token"),), (("authorization", f"Basic {ALPHA}"),)],
    ids=["none", "unknown", "not-bearer"],
)
def test_calls_without_a_valid_token_are_unauthenticated(
    channel: grpc.Channel, metadata: tuple[tuple[str, str], ...]
) -> None:
    query_stub = query_pb2_grpc.QueryServiceStub(channel)
    ingest_stub = ingest_pb2_grpc.IngestServiceStub(channel)
    calls: list[Callable[[], Any]] = [
        lambda: query_stub.Retrieve(
            query_pb2.RetrieveRequest(workspace="alpha", query=QUESTION), metadata=metadata
        ),
        lambda: ingest_stub.GetIndexingProgress(
            ingest_pb2.GetIndexingProgressRequest(), metadata=metadata
        ),
        # Even a malformed request learns nothing before the caller is known.
        lambda: query_stub.Query(query_pb2.QueryRequest(query=""), metadata=metadata),
    ]
    for call in calls:
        assert code_of(call) == grpc.StatusCode.UNAUTHENTICATED


@pytest.mark.parametrize("body", UNDECODABLE.values(), ids=list(UNDECODABLE))
def test_undecodable_bytes_are_read_only_from_a_known_caller(
    channel: grpc.Channel, server: ServeProcess, body: bytes
) -> None:
    method = "/ragstream.v1.QueryService/Retrieve"
    for metadata in [(), (("authorization", "Bearer wrong-token"),)]:
        assert raw_error(channel, method, body, metadata=metadata).code() == (
            grpc.StatusCode.UNAUTHENTICATED
        )
    error = raw_error(channel, method, body, metadata=auth(ALPHA))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    stream = "/ragstream.v1.QueryService/StreamQuery"
    no_token = raw_error(channel, stream, body, streaming=True)
    assert no_token.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "Traceback" not in server.log()


def test_probes_need_no_token_and_progress_follows_the_grant(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    stub = ingest_pb2_grpc.IngestServiceStub(channel)

    def progress(workspace: str, token: str) -> Any:
        request = ingest_pb2.GetIndexingProgressRequest(workspace=workspace)
        return stub.GetIndexingProgress(request, metadata=auth(token))

    progress("beta", BETA)
    progress("", ADMIN)  # every workspace: a "*" grant only
    assert code_of(lambda: progress("alpha", BETA)) == grpc.StatusCode.PERMISSION_DENIED
    assert code_of(lambda: progress("", BETA)) == grpc.StatusCode.PERMISSION_DENIED


def test_denials_name_the_workspace_never_the_token(channel: grpc.Channel) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        retrieve(channel, "beta", ALPHA)
    error = caught.value
    assert isinstance(error, grpc.Call)
    assert "'beta'" in (error.details() or "")
    assert ALPHA not in (error.details() or "")


def test_the_server_log_holds_no_token(server: ServeProcess, indexed: None) -> None:
    text = Path(server.log_path).read_text(errors="replace")
    assert "denied workspace" in text  # the denials above were logged ...
    for token in (ALPHA, BETA, ADMIN):
        assert token not in text  # ... by token name only


def test_the_cli_sends_the_token_from_the_environment(server: ServeProcess, indexed: None) -> None:
    import os
    import subprocess
    import sys

    def cli(token: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "ragstream.cli.main", "query", QUESTION]
        return subprocess.run(
            [*command, "-w", "alpha", "--context-only", "--server", server.address],
            env={**os.environ, "RAGSTREAM_TOKEN": token, "COLUMNS": "200"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    allowed = cli(ALPHA)
    assert allowed.returncode == 0, allowed.stderr
    denied = cli(BETA)
    assert denied.returncode == 2 and "PERMISSION_DENIED" in denied.stderr


def http(server: ServeProcess, path: str, token: str | None, body: Any = None) -> tuple[int, Any]:
    assert server.http_address is not None
    return http_json.call(server.http_address, path, body, token)


def test_the_http_port_takes_the_same_tokens_and_grants(
    server: ServeProcess, indexed: None
) -> None:
    body = {"workspace": "alpha", "query": QUESTION}
    status, reply = http(server, "/v1/retrieve", ALPHA, body)
    assert status == 200 and {c["docId"] for c in reply["context"]["chunks"]} == set(DOCS)
    assert http(server, "/v1/retrieve", BETA, body)[0] == 403
    status, reply = http(server, "/v1/retrieve", None, body)
    assert (status, reply["code"]) == (401, 16)
    assert http(server, "/v1/retrieve", "wrong-token", body)[0] == 401
    stats = "/v1/graph/stats?workspace=alpha"
    assert http(server, stats, ALPHA)[0] == 200
    assert http(server, stats, BETA)[0] == 403
    assert http(server, "/v1/documents/status?workspace=beta&docIds=recall.md", ALPHA)[0] == 403
    for reads in ("communities?", "community?communityId=c1&", "entity/communities?name=x&"):
        path = f"/v1/graph/{reads}workspace=alpha"
        assert [http(server, path, token)[0] for token in (BETA, None)] == [403, 401]
    # The console's page holds no data: it loads without a token, its calls need one.
    with urllib.request.urlopen(f"http://{server.http_address}/", timeout=30) as page:
        assert page.status == 200 and b"ragstream" in page.read()
