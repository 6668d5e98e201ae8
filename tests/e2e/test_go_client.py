"""The Go client of examples/go, built with the machine's Go against the committed Go module
gen/go (which `scripts/gen-go.sh check` holds to proto/), gets what the Python client gets."""

import json
import shutil
import subprocess
from pathlib import Path

import grpc
import pytest

from tests.e2e.conftest import WORKSPACE
from tests.support.clients import python_results, run_client
from tests.support.server import REPO, ServeProcess

pytestmark = pytest.mark.e2e
CLIENT_DIR = REPO / "examples" / "go"
QUESTION = "Who leads the Tern sensor team?"


@pytest.fixture(scope="module")
def go_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not shutil.which("go"):
        pytest.fail("Go is required for the cross-language client test")
    binary = tmp_path_factory.mktemp("go") / "ragstream-client"
    # scripts/go.sh keeps the module and build caches under the project's cache: the first
    # build downloads and compiles grpc-go (minutes), later ones take seconds.
    build = ["bash", str(REPO / "scripts" / "go.sh"), "build", "-o", str(binary), "."]
    subprocess.run(build, cwd=CLIENT_DIR, check=True, timeout=1200)
    return binary


def test_go_client_gets_the_same_results(
    go_client: Path, server: ServeProcess, channel: grpc.Channel, indexed: object
) -> None:
    result = run_client(
        [str(go_client), "-addr", server.address, "-workspace", WORKSPACE, QUESTION]
    )
    assert result.returncode == 0, result.stderr
    go = json.loads(result.stdout)

    expected = python_results(channel, WORKSPACE, QUESTION)

    assert go["services"] == [
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
        "ragstream.v1.GraphService",
        "ragstream.v1.IngestService",
        "ragstream.v1.QueryService",
    ]
    assert len(expected["retrieve"]["chunks"]) == 5
    assert expected["retrieve"]["mode"] == "QUERY_MODE_NAIVE"
    assert expected["query"]["answer"]  # an answer, not two empty strings that match
    assert expected["stream"]["events"] == ["context", "delta", "end"]
    assert expected["stream"]["answer"] == expected["query"]["answer"]
    assert go["retrieve"] == expected["retrieve"]
    assert go["query"] == expected["query"]
    assert go["stream"] == expected["stream"]


def test_go_client_reports_an_invalid_request(go_client: Path, server: ServeProcess) -> None:
    result = run_client(
        [str(go_client), "-addr", server.address, "-workspace", "no spaces", QUESTION], timeout_s=60
    )
    assert result.returncode == 1
    assert "InvalidArgument" in result.stderr and "workspace" in result.stderr
