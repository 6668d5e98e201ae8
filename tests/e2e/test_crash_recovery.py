"""kill -9 of `ragstream serve` mid-ingest, then a restart: every document processed once."""

import asyncio
import sqlite3
import time
from pathlib import Path

import grpc
import pytest

from ragstream.common.models import Collection
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.search import SqliteSearchStore
from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
DOCS = 300
WORKSPACE = "crash"


def document(i: int) -> ingest_pb2.DocumentInput:
    paragraphs = [
        f"Report {i} paragraph {p}. Station {i % 17} measured salinity {p * i % 97} units. "
        f"Engineer {i % 11} filed note {p} about sensor batch {i}-{p}."
        for p in range(40)
    ]
    return ingest_pb2.DocumentInput(
        doc_id=f"doc-{i:04d}", content="\n\n".join(paragraphs), version=1
    )


def statuses(stub: ingest_pb2_grpc.IngestServiceStub) -> list[common_pb2.DocumentStatus]:
    reply = stub.GetDocumentStatus(
        ingest_pb2.GetDocumentStatusRequest(
            workspace=WORKSPACE, doc_ids=[f"doc-{i:04d}" for i in range(DOCS)]
        )
    )
    return list(reply.documents)


def processed(stub: ingest_pb2_grpc.IngestServiceStub) -> int:
    return sum(s.state == common_pb2.DOCUMENT_STATE_PROCESSED for s in statuses(stub))


async def stored_chunks(data_dir: Path) -> tuple[int, list[str]]:
    """The store's chunk count and every stored chunk id (duplicates included)."""

    def read(conn: sqlite3.Connection) -> list[str]:
        rows = conn.execute("SELECT id FROM search_chunks WHERE workspace = ?", (WORKSPACE,))
        return [row[0] for row in rows]

    async with await Database.open(data_dir) as db:
        store = await SqliteSearchStore.open(db)
        return await store.count(Collection.CHUNKS, WORKSPACE), await db.read(read)


def test_kill_minus_nine_mid_ingest_then_restart(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server = ServeProcess(data_dir).start()
    with grpc.insecure_channel(server.address) as channel:
        stub = ingest_pb2_grpc.IngestServiceStub(channel)
        for start in range(0, DOCS, 50):
            stub.PublishDocuments(
                ingest_pb2.PublishDocumentsRequest(
                    workspace=WORKSPACE, documents=[document(i) for i in range(start, start + 50)]
                )
            )
        deadline = time.monotonic() + 60
        while processed(stub) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        done_before_crash = processed(stub)
    server.kill()
    assert 0 < done_before_crash < DOCS, "the crash must land in the middle of the ingest"

    server = ServeProcess(data_dir).start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ingest_pb2_grpc.IngestServiceStub(channel)
            deadline = time.monotonic() + 180
            while processed(stub) < DOCS and time.monotonic() < deadline:
                time.sleep(0.2)
            final = statuses(stub)
    finally:
        assert server.stop() == 0
    assert [s.state for s in final] == [common_pb2.DOCUMENT_STATE_PROCESSED] * DOCS
    chunk_total = sum(s.chunk_count for s in final)
    count, ids = asyncio.run(stored_chunks(data_dir))
    assert len(ids) == len(set(ids)), "duplicate chunk records"
    assert count == len(ids) == chunk_total, "orphaned or missing chunks"
