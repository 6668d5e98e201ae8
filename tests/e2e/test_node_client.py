"""A Node.js gRPC client, built from proto/ in the test, gets what the Python client gets."""

import json
import shutil
import subprocess
from pathlib import Path

import grpc
import pytest

from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.e2e.conftest import WORKSPACE
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
CLIENT_DIR = Path(__file__).parent / "node_client"
QUESTION = "Who leads the Tern sensor team?"


@pytest.fixture(scope="module")
def node_client() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        pytest.fail("node and npm are required for the cross-language client test")
    if not (CLIENT_DIR / "node_modules" / "@grpc" / "grpc-js").is_dir():
        subprocess.run(
            [npm, "install", "--no-package-lock", "--no-audit", "--no-fund", "--silent"],
            cwd=CLIENT_DIR,
            check=True,
            timeout=300,
        )
    return CLIENT_DIR / "client.js"


def test_node_client_gets_the_same_context(
    node_client: Path, server: ServeProcess, channel: grpc.Channel, indexed: object
) -> None:
    result = subprocess.run(
        ["node", str(node_client), server.address, WORKSPACE, QUESTION],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    node = json.loads(result.stdout)

    stub = query_pb2_grpc.QueryServiceStub(channel)
    params = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE, chunk_top_k=5)
    retrieved = stub.Retrieve(
        query_pb2.RetrieveRequest(workspace=WORKSPACE, query=QUESTION, params=params)
    )
    answered = stub.Query(
        query_pb2.QueryRequest(workspace=WORKSPACE, query=QUESTION, params=params)
    )

    def chunks(reply: query_pb2.RetrieveResponse | query_pb2.QueryResponse) -> list[dict[str, str]]:
        return [{"chunk_id": c.chunk_id, "doc_id": c.doc_id} for c in reply.context.chunks]

    assert len(node["retrieve"]["chunks"]) == 5
    assert node["retrieve"]["chunks"] == chunks(retrieved)
    assert node["retrieve"]["mode"] == "QUERY_MODE_NAIVE"
    assert node["query"]["chunks"] == chunks(answered)
    assert node["query"]["answer"] == answered.answer
