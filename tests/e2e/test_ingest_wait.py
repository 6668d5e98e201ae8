"""`ingest --wait` returns once the index is current: its documents indexed and their
knowledge-graph merges applied. The embedder (a local OpenAI-compatible server) takes 1.5 s
a request, so a document's merges stay queued for at least that long after the document
itself is indexed: a wait that stopped at the documents would see them, as
`--documents-only` (the old behaviour) does."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc
from tests.support.server import ServeProcess, openai_embedding_env

pytestmark = pytest.mark.e2e
WORKSPACE = "wait"
EMBED_LATENCY_S = 1.5
TEXT = (
    "Halvorsen Robotics was founded by Ingrid Halvorsen in Bergen. "
    "Ingrid Halvorsen studied at the Norwegian Institute of Technology. "
    "Halvorsen Robotics builds the Tern S3 drone with Kestrel Polymers."
)


@pytest.fixture
async def embedder() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(dimensions=64) as server:
        server.set_latency("embeddings", EMBED_LATENCY_S)
        yield server


@pytest.fixture
async def serve(tmp_path: Path, embedder: OpenAITestServer) -> AsyncIterator[ServeProcess]:
    """Started and stopped off the event loop, which keeps serving the embedder: a merge
    still embedding at the end then finishes, instead of holding the stop 30 s."""
    process = ServeProcess(tmp_path / "data", openai_embedding_env(embedder.base_url))
    await asyncio.to_thread(process.start)
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)


async def ingest(serve: ServeProcess, path: Path, *options: str) -> tuple[int, str]:
    """Runs the CLI without blocking the loop that serves the embedder."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "ragstream.cli.main",
        "ingest",
        str(path),
        "-w",
        WORKSPACE,
        "--server",
        serve.address,
        *options,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "200"},
    )
    output, _ = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode is not None
    return process.returncode, output.decode()


async def progress(serve: ServeProcess) -> tuple[int, int]:
    async with grpc.aio.insecure_channel(serve.address) as channel:
        reply = await ingest_pb2_grpc.IngestServiceStub(channel).GetIndexingProgress(
            ingest_pb2.GetIndexingProgressRequest(workspace=WORKSPACE)
        )
    return reply.pending_document_events, reply.pending_graph_merges


async def test_wait_returns_once_the_documents_merges_are_applied(
    serve: ServeProcess, tmp_path: Path
) -> None:
    doc = tmp_path / "halvorsen.md"
    doc.write_text(TEXT)
    code, output = await ingest(serve, doc, "--wait")
    assert code == 0, output
    assert "indexed 1, failed 0" in output
    assert await progress(serve) == (0, 0)


async def test_documents_only_returns_while_merges_are_queued(
    serve: ServeProcess, tmp_path: Path
) -> None:
    doc = tmp_path / "halvorsen.md"
    doc.write_text(TEXT)
    code, output = await ingest(serve, doc, "--wait", "--documents-only")
    assert code == 0, output
    assert "indexed 1, failed 0" in output
    documents, merges = await progress(serve)
    assert documents == 0
    assert merges > 0
