"""The IngestService over the embedded pipeline: publishing is idempotent per (doc_id,
version), so a client that retries after DEADLINE_EXCEEDED cannot apply a change twice, and
deleting what the index does not hold is a no-op that leaves no record."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from ragstream.cli import demo_data
from ragstream.common.config import Settings
from ragstream.common.models import DocState
from ragstream.query.main import build_server
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline

WS = "retry"
FILES = sorted(demo_data.CORPUS.iterdir())[:4]
BATCH = ingest_pb2.PublishDocumentsRequest(
    workspace=WS,
    documents=[
        ingest_pb2.DocumentInput(
            doc_id=path.name,
            content=path.read_text(encoding="utf-8"),
            version=1_700_000_000_000_000_000 + n,
            timestamp=Timestamp(seconds=1_700_000_000 + n),
        )
        for n, path in enumerate(FILES)
    ],
)


@contextlib.asynccontextmanager
async def ingest_service(
    settings: Settings,
) -> AsyncIterator[tuple[Pipeline, ingest_pb2_grpc.IngestServiceAsyncStub]]:
    """Both indexing stages, and the gRPC server (gate included) in front of them."""
    async with running_pipeline(settings) as pipeline:
        server = build_server(settings, pipeline.backends, "127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                yield pipeline, ingest_pb2_grpc.IngestServiceStub(channel)
        finally:
            await server.stop(0)


async def events(pipeline: Pipeline) -> dict[str, int]:
    topics = pipeline.backends.topics
    return await pipeline.log.end_offsets([topics.documents, topics.graph_merge])


async def publish_and_dump(
    settings: Settings, deadlines: list[float]
) -> tuple[dict[str, Any], dict[str, int]]:
    """Sends BATCH once per deadline, as a client retrying after each DEADLINE_EXCEEDED."""
    async with ingest_service(settings) as (pipeline, stub):
        for deadline in deadlines:
            try:
                await stub.PublishDocuments(BATCH, timeout=deadline)
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        await pipeline.idle()
        return await pipeline.dump(WS), await events(pipeline)


async def test_a_retried_publish_leaves_the_index_as_one_publish(tmp_path: Path) -> None:
    once, once_events = await publish_and_dump(embedded_settings(tmp_path / "once"), [30])
    retried, retried_events = await publish_and_dump(
        embedded_settings(tmp_path / "retried"), [0.001, 0.02, 30, 30]
    )
    assert once["chunks"] and once["entities"] and once["relations"]
    assert retried == once
    topics = embedded_settings(tmp_path).bus.topic_prefix
    documents, merges = f"{topics}.documents", f"{topics}.graph-merge"
    assert retried_events[documents] >= 2 * once_events[documents]  # duplicates arrived ...
    assert retried_events[merges] == once_events[merges]  # ... and caused no merge


async def test_deleting_what_the_index_does_not_hold_leaves_no_record(tmp_path: Path) -> None:
    async with ingest_service(embedded_settings(tmp_path)) as (pipeline, stub):
        await stub.PublishDocuments(BATCH)
        await pipeline.idle()
        before, before_events = await pipeline.dump(WS), await events(pipeline)
        gone = ingest_pb2.DeleteDocumentsRequest(workspace=WS, doc_ids=["never-existed.md"])
        reply = await stub.DeleteDocuments(gone)
        assert [r.doc_id for r in reply.results] == ["never-existed.md"]
        deleted = ingest_pb2.DeleteDocumentsRequest(workspace=WS, doc_ids=[FILES[0].name])
        await stub.DeleteDocuments(deleted)
        await pipeline.idle()
        once, once_events = await pipeline.dump(WS), await events(pipeline)
        await stub.DeleteDocuments(deleted)  # a retry of the delete
        await stub.DeleteDocuments(gone)
        await pipeline.idle()
        after, after_events = await pipeline.dump(WS), await events(pipeline)
        status = await stub.GetDocumentStatus(
            ingest_pb2.GetDocumentStatusRequest(workspace=WS, doc_ids=["never-existed.md"])
        )
        listed = await stub.ListDocuments(ingest_pb2.ListDocumentsRequest(workspace=WS))
    assert list(status.documents) == []
    assert "never-existed.md" not in {d.doc_id for d in listed.documents}
    assert set(before["documents"]) == {path.name for path in FILES}
    assert "never-existed.md" not in once["documents"]
    assert once["documents"][FILES[0].name][1] is DocState.DELETED
    assert after == once  # the retried delete and the second unknown one changed nothing
    merges = pipeline.backends.topics.graph_merge
    assert after_events[merges] == once_events[merges] > before_events[merges]
