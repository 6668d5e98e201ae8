"""The client side of the CLI: gRPC calls to a running `ragstream serve`."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from ragstream.cli.files import FileDocument
from ragstream.v1 import (
    common_pb2,
    ingest_pb2,
    ingest_pb2_grpc,
    query_pb2,
    query_pb2_grpc,
)

FINAL_STATES = (
    common_pb2.DOCUMENT_STATE_PROCESSED,
    common_pb2.DOCUMENT_STATE_FAILED,
    common_pb2.DOCUMENT_STATE_DELETED,
)
Report = Callable[[int, int | None], None]
"""Told what a wait still waits for: (documents left, graph merges left or None)."""
DEFAULT_BATCH_MB = 4.0
"""Publish requests stay under this size: a quarter of the server's default message limit
(server.max_message_mb, 16 MB). The client cannot know the server's setting, so a request
the server still finds too large is split in halves until it fits."""
MAX_BATCH_DOCUMENTS = 1000
"""Documents in one PublishDocuments call (the API's limit)."""
_FIELD_OVERHEAD = 6
"""Bytes a document adds to a request beyond its own encoding: tag and length prefix."""


def batches(
    documents: Sequence[ingest_pb2.DocumentInput], max_bytes: int, max_count: int
) -> Iterator[list[ingest_pb2.DocumentInput]]:
    """Consecutive runs of `documents` whose encoded size stays within `max_bytes` and whose
    count within `max_count`; a document larger than `max_bytes` travels alone."""
    batch: list[ingest_pb2.DocumentInput] = []
    size = 0
    for document in documents:
        cost = document.ByteSize() + _FIELD_OVERHEAD
        if batch and (size + cost > max_bytes or len(batch) == max_count):
            yield batch
            batch, size = [], 0
        batch.append(document)
        size += cost
    if batch:
        yield batch


def too_large(error: grpc.aio.AioRpcError) -> bool:
    """The server refused the request for its size (not for load, which is also
    RESOURCE_EXHAUSTED)."""
    code = error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    return code and "larger than max" in (error.details() or "")


@dataclass
class Published:
    results: list[ingest_pb2.PublishResult] = field(default_factory=list)
    """One per published document: its doc_id and the version the indexer will apply."""
    too_large: list[str] = field(default_factory=list)
    """Doc ids refused because even alone they exceed the server's message limit."""


class BearerToken(
    grpc.aio.UnaryUnaryClientInterceptor,  # type: ignore[type-arg]
    grpc.aio.UnaryStreamClientInterceptor,  # type: ignore[type-arg]
):
    """Sends `authorization: Bearer <token>` with every call."""

    def __init__(self, token: str) -> None:
        self._metadata = (("authorization", f"Bearer {token}"),)

    def _with_token(self, details: Any) -> Any:
        metadata = tuple(details.metadata or ()) + self._metadata
        return details._replace(metadata=metadata)

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._with_token(details), request)


class Client:
    """One channel to the server; use as `async with Client(address) as client:`.

    With auth on, the token comes from RAGSTREAM_TOKEN (never from a command-line flag, which
    other users of the machine could read in the process list)."""

    def __init__(self, address: str, max_message_mb: int = 64) -> None:
        limit = max_message_mb * 1024 * 1024
        token = os.environ.get("RAGSTREAM_TOKEN", "")
        self._channel = grpc.aio.insecure_channel(
            address,
            options=[
                ("grpc.max_receive_message_length", limit),
                ("grpc.max_send_message_length", limit),
            ],
            interceptors=[BearerToken(token)] if token else None,  # type: ignore[list-item]
        )
        self.query = query_pb2_grpc.QueryServiceStub(self._channel)
        self.ingest = ingest_pb2_grpc.IngestServiceStub(self._channel)

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._channel.close(grace=None)

    async def publish(
        self,
        workspace: str,
        documents: Sequence[FileDocument],
        batch_mb: float = DEFAULT_BATCH_MB,
    ) -> Published:
        """Publishes in requests of at most `batch_mb` MB. Publishing is idempotent per
        (doc_id, version), and the version is the file's, so a batch may be sent again."""
        inputs = [
            ingest_pb2.DocumentInput(
                doc_id=d.doc_id,
                content=d.content,
                file_path=str(d.path),
                version=d.version,
                metadata=d.metadata,
            )
            for d in documents
        ]
        published = Published()
        for batch in batches(inputs, int(batch_mb * 1024 * 1024), MAX_BATCH_DOCUMENTS):
            await self._publish(workspace, batch, published)
        return published

    async def _publish(
        self, workspace: str, batch: list[ingest_pb2.DocumentInput], published: Published
    ) -> None:
        request = ingest_pb2.PublishDocumentsRequest(workspace=workspace, documents=batch)
        try:
            response = await self.ingest.PublishDocuments(request)
        except grpc.aio.AioRpcError as error:
            if not too_large(error):
                raise
            if len(batch) == 1:
                published.too_large.append(batch[0].doc_id)
                return
            half = len(batch) // 2
            await self._publish(workspace, batch[:half], published)
            await self._publish(workspace, batch[half:], published)
            return
        published.results.extend(response.results)

    async def wait_until_done(
        self,
        workspace: str,
        published: Sequence[ingest_pb2.PublishResult],
        timeout_s: float,
        poll_s: float = 0.25,
        report: Report | None = None,
    ) -> list[common_pb2.DocumentStatus]:
        """Statuses once every document reached its published version in a final state.
        `report` gets (documents left, None) after each look."""
        wanted = {r.doc_id: r.version for r in published}
        deadline = time.monotonic() + timeout_s
        while True:
            statuses = await self.status(workspace, list(wanted))
            done = [
                s for s in statuses if s.version >= wanted[s.doc_id] and s.state in FINAL_STATES
            ]
            if report is not None:
                report(len(wanted) - len(done), None)
            if len(done) == len(wanted):
                return done
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(wanted) - len(done)} documents not indexed in time")
            await asyncio.sleep(poll_s)

    async def status(
        self, workspace: str, doc_ids: Sequence[str]
    ) -> list[common_pb2.DocumentStatus]:
        statuses: list[common_pb2.DocumentStatus] = []
        for start in range(0, len(doc_ids), 500):
            response = await self.ingest.GetDocumentStatus(
                ingest_pb2.GetDocumentStatusRequest(
                    workspace=workspace, doc_ids=doc_ids[start : start + 500]
                )
            )
            statuses.extend(response.documents)
        return statuses

    async def list_all(
        self, workspace: str, state: common_pb2.DocumentState
    ) -> list[common_pb2.DocumentStatus]:
        statuses: list[common_pb2.DocumentStatus] = []
        token = ""
        while True:
            response = await self.ingest.ListDocuments(
                ingest_pb2.ListDocumentsRequest(
                    workspace=workspace, state=state, page_size=500, page_token=token
                )
            )
            statuses.extend(response.documents)
            token = response.next_page_token
            if not token:
                return statuses

    async def progress(self, workspace: str) -> tuple[int, int]:
        """(document events, graph merges) of `workspace` still waiting for the indexer;
        an empty workspace: of every workspace (a token granted "*" only)."""
        reply = await self.ingest.GetIndexingProgress(
            ingest_pb2.GetIndexingProgressRequest(workspace=workspace)
        )
        return reply.pending_document_events, reply.pending_graph_merges

    async def wait_until_indexed(
        self,
        workspace: str,
        published: Sequence[ingest_pb2.PublishResult],
        timeout_s: float,
        graph: bool = True,
        report: Report | None = None,
    ) -> list[common_pb2.DocumentStatus]:
        """The documents' final statuses, once the workspace's graph merges are done too (so
        that queries see the whole graph): what `ingest --wait` waits for. With `graph`
        false, as soon as the documents are, while their merges may still be queued."""
        started = time.monotonic()
        statuses = await self.wait_until_done(workspace, published, timeout_s, report=report)
        if graph:
            left_s = timeout_s - (time.monotonic() - started)
            await self.wait_until_current(workspace, left_s, report=report)
        return statuses

    async def wait_until_current(
        self, workspace: str, timeout_s: float, poll_s: float = 0.5, report: Report | None = None
    ) -> None:
        """Returns once no indexing work of `workspace` is queued (documents and graph).
        `report` gets (document events, graph merges) still queued after each look."""
        deadline = time.monotonic() + timeout_s
        while (pending := await self.progress(workspace)) != (0, 0):
            if report is not None:
                report(*pending)
            if time.monotonic() > deadline:
                raise TimeoutError("the index did not catch up in time")
            await asyncio.sleep(poll_s)

    async def ask(self, request: query_pb2.QueryRequest) -> query_pb2.QueryResponse:
        return await self.query.Query(request)
