"""`ragstream mcp` in front of a running `ragstream serve` with auth on, called with the MCP
SDK's own client over stdio and over streamable HTTP: every tool is listed and called, and
a token granted workspace alpha cannot reach beta through MCP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ragstream.query.transport.auth import token_digest
from tests.support.server import ServeProcess, free_port

pytestmark = pytest.mark.e2e
ALPHA, BETA = "tok-alpha-mcp-1", "tok-beta-mcp-2"
TOOLS = {
    "retrieve",
    "query",
    "search_entities",
    "get_entity",
    "get_neighbourhood",
    "ingest",
    "delete",
    "status",
}
DOCS = {
    "recall": "The Tern S3 drone was recalled in 2024 because its battery seals failed.",
    "seals": "Kestrel Polymers made the battery seals used in the Tern S3 drone.",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    root = tmp_path_factory.mktemp("mcp")
    tokens = root / "tokens.toml"
    tokens.write_text(
        "".join(
            f'[[tokens]]\nname = "{name}"\nsha256 = "{token_digest(token)}"\n'
            f'workspaces = ["{name}"]\n\n'
            for name, token in (("alpha", ALPHA), ("beta", BETA))
        )
    )
    env = {"RAGSTREAM_AUTH__ENABLED": "true", "RAGSTREAM_AUTH__TOKENS_FILE": str(tokens)}
    with ServeProcess(root / "data", env) as process:
        yield process


def mcp_command(server: ServeProcess, *options: str) -> list[str]:
    return [sys.executable, "-m", "ragstream.cli.main", "mcp", "--server", server.address,
            "--workspace", "alpha", *options]  # fmt: skip


@pytest.fixture(scope="module")
def http_endpoint(server: ServeProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`ragstream mcp --transport http` without a token of its own: callers bring theirs."""
    port = free_port()
    log = tmp_path_factory.mktemp("mcp-http") / "mcp.log"
    env = {k: v for k, v in os.environ.items() if k != "RAGSTREAM_TOKEN"}
    command = mcp_command(server, "--transport", "http", "--listen", f"127.0.0.1:{port}")
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        wait_listening(port, process, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def wait_listening(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(log.read_text())


def over_stdio(server: ServeProcess, token: str) -> Client:
    env = {**os.environ, "RAGSTREAM_TOKEN": token}
    command = mcp_command(server)
    return Client(StdioServerParameters(command=command[0], args=command[1:], env=env))


@contextlib.asynccontextmanager
async def over_http(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        yield client


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    return json.loads(text)


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]


async def exercise(client: Client, prefix: str) -> None:
    """Every tool once, on documents named with `prefix`, in the token's workspace."""
    assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
    ids = [f"{prefix}-{name}" for name in DOCS]
    for doc_id, text in zip(ids, DOCS.values(), strict=True):
        [published] = (await call(client, "ingest", doc_id=doc_id, text=text))["results"]
        assert published["docId"] == doc_id
    await until_indexed(client, ids, "DOCUMENT_STATE_PROCESSED")
    retrieved = await call(client, "retrieve", question="Who made the battery seals?", mode="naive")
    assert {c["docId"] for c in retrieved["context"]["chunks"]} >= set(ids)
    answered = await call(client, "query", question="Who made the battery seals?")
    assert answered["answer"] and {r["docId"] for r in answered["references"]} & set(ids)
    hits = (await call(client, "search_entities", text="Kestrel Polymers"))["hits"]
    name = hits[0]["entity"]["name"]
    assert name == "Kestrel Polymers"
    entity = await call(client, "get_entity", name=name, include_chunks=True)
    assert f"{prefix}-seals" in entity["entity"]["sourceDocIds"] and entity["chunks"]
    around = await call(client, "get_neighbourhood", name="Tern S3", depth=1)
    assert "Kestrel Polymers" in {n["entity"]["name"] for n in around["nodes"]}
    await call(client, "delete", doc_ids=ids)
    await until_indexed(client, ids, "DOCUMENT_STATE_DELETED")


async def until_indexed(client: Client, ids: list[str], state: str) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = await call(client, "status", doc_ids=ids)
        states = {d["state"] for d in status.get("documents", [])}
        pending = int(status.get("pendingDocumentEvents", 0))
        merges = int(status.get("pendingGraphMerges", 0))
        if states == {state} and len(status["documents"]) == len(ids) and pending + merges == 0:
            return
        await asyncio.sleep(0.3)
    raise TimeoutError(f"{ids} not {state}")


async def denied_beta(client: Client) -> None:
    for tool, arguments in (
        ("retrieve", {"question": "Who made the battery seals?"}),
        ("search_entities", {"text": "Kestrel"}),
        ("ingest", {"doc_id": "sneak", "text": "Into beta."}),
    ):
        message = await refused(client, tool, workspace="beta", **arguments)
        assert "PERMISSION_DENIED" in message and "'beta'" in message


async def test_every_tool_over_stdio_within_the_tokens_workspace(server: ServeProcess) -> None:
    async with over_stdio(server, ALPHA) as client:
        await exercise(client, "stdio")
        await denied_beta(client)


async def test_every_tool_over_streamable_http_with_the_callers_token(
    server: ServeProcess, http_endpoint: str
) -> None:
    async with over_http(http_endpoint, ALPHA) as client:
        await exercise(client, "http")
        await denied_beta(client)
    async with over_http(http_endpoint, None) as anonymous:
        assert "UNAUTHENTICATED" in await refused(anonymous, "status", doc_ids=["x"])


async def test_a_bad_argument_is_a_tool_error_naming_it(http_endpoint: str) -> None:
    async with over_http(http_endpoint, ALPHA) as client:
        message = await refused(client, "retrieve", question="q", mode="sideways")
        assert "mode" in message
        message = await refused(client, "get_neighbourhood", name="x", depth=9)
        assert "depth" in message
