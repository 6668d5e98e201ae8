"""`ragstream import-graph FILE` against a running server: the records are searchable
through GraphService, the HTTP route takes the same request, a bad file is one line naming
the line and field with nothing sent, and `ragstream delete SOURCE` removes the records."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from ragstream.cli.client import Client
from ragstream.v1 import graph_pb2, graph_pb2_grpc, ingest_pb2, ingest_pb2_grpc
from tests.e2e.test_cli_errors import one_line_error, ragstream
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
WS = "curated"
RECORDS = [
    {"kind": "entity", "source_id": "crm", "name": "Kestrel Polymers", "type": "organization",
     "description": "Makes battery seals."},
    {"kind": "entity", "source_id": "crm", "name": "Tern S3", "type": "product"},
    {"kind": "relation", "source_id": "crm", "source": "Kestrel Polymers", "target": "Tern S3",
     "keywords": "supplier", "description": "Supplies the Tern S3's seals."},
    {"kind": "entity", "source_id": "wiki", "name": "Ningbo", "type": "location"},
]  # fmt: skip


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with ServeProcess(tmp_path_factory.mktemp("import") / "data", http=True) as process:
        yield process


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def names(server: ServeProcess, text: str) -> set[str]:
    with grpc.insecure_channel(server.address) as channel:
        stub = graph_pb2_grpc.GraphServiceStub(channel)
        reply = stub.SearchEntities(graph_pb2.SearchEntitiesRequest(workspace=WS, query=text))
    return {hit.entity.name for hit in reply.hits}


def test_an_imported_file_is_searchable_until_its_source_is_deleted(
    server: ServeProcess, tmp_path: Path
) -> None:
    path = write(tmp_path / "graph.jsonl", RECORDS)
    options = ["--workspace", WS, "--server", server.address]
    imported = ragstream("import-graph", str(path), *options, "--wait")
    assert imported.returncode == 0, imported.stderr
    assert "imported 3 entities and 1 relations from 2 sources" in imported.stdout
    assert {"Kestrel Polymers", "Tern S3"} <= names(server, "Kestrel Polymers Tern S3")
    assert "Ningbo" in names(server, "Ningbo")
    deleted = ragstream("delete", "crm", *options)
    assert deleted.returncode == 0, deleted.stderr
    asyncio.run(current(server, WS))
    assert not {"Kestrel Polymers", "Tern S3"} & names(server, "Kestrel Polymers Tern S3")
    assert "Ningbo" in names(server, "Ningbo")


async def current(server: ServeProcess, workspace: str) -> None:
    async with Client(server.address) as client:
        await client.wait_until_current(workspace, 60)


def test_a_bad_file_is_one_line_naming_line_and_field(server: ServeProcess, tmp_path: Path) -> None:
    bad = [*RECORDS[:2], {**RECORDS[2], "weight": "heavy"}]
    path = write(tmp_path / "bad.jsonl", bad)
    result = ragstream("import-graph", str(path), "--workspace", "bad", "--server", server.address)
    assert one_line_error(result, "bad.jsonl:3", "weight").endswith("must be a number")
    with grpc.insecure_channel(server.address) as channel:
        listed = ingest_pb2_grpc.IngestServiceStub(channel).ListDocuments(
            ingest_pb2.ListDocumentsRequest(workspace="bad")
        )
    assert not listed.documents  # nothing was sent


def test_the_http_route_imports_and_names_a_bad_field(server: ServeProcess) -> None:
    url = f"http://{server.http_address}/v1/graph/import"
    body: dict[str, Any] = {
        "workspace": WS,
        "sourceId": "http-src",
        "entities": [{"name": "Skua 3"}],
        "relations": [{"source": "Skua 3", "target": "skua  3"}],
    }
    status, reply = post(url, body)
    assert status == 400 and reply["details"][0]["fieldViolations"][0]["field"] == (
        "relations[0].target"
    )
    status, reply = post(url, {**body, "relations": []})
    assert status == 200 and reply["result"]["docId"] == "http-src"
    asyncio.run(current(server, WS))
    assert "Skua 3" in names(server, "Skua 3")


def post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
