"""A Node.js gRPC client, built from proto/ in the test, gets what the Python client gets."""

import json
import shutil
import subprocess
from pathlib import Path

import grpc
import pytest

from tests.e2e.conftest import WORKSPACE
from tests.support.clients import python_results, run_client
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
    result = run_client(["node", str(node_client), server.address, WORKSPACE, QUESTION])
    assert result.returncode == 0, result.stderr
    node = json.loads(result.stdout)

    expected = python_results(channel, WORKSPACE, QUESTION)
    assert len(expected["retrieve"]["chunks"]) == 5
    assert node["retrieve"] == expected["retrieve"]
    assert node["query"] == expected["query"]
