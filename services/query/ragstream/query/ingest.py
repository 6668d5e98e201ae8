"""gRPC IngestService: publishes document changes to the bus and reports their status.

Publishing returns once the events are durable on the bus; the indexer applies them
asynchronously, and GetDocumentStatus shows how far it got.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from ragstream.common.bus.protocols import Publisher
from ragstream.common.events import MAX_DOC_ID_CHARS, DocumentChange, encode
from ragstream.common.storage.protocols import DocumentStore
from ragstream.query import convert
from ragstream.query.errors import abort_invalid
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc

Context = grpc.aio.ServicerContext[Any, Any]
MAX_PAGE_SIZE = 1000
DEFAULT_PAGE_SIZE = 100


def _doc_id(field: str, doc_id: str) -> str:
    if not doc_id or len(doc_id) > MAX_DOC_ID_CHARS:
        raise convert.InvalidField(field, f"must have 1 to {MAX_DOC_ID_CHARS} characters")
    return doc_id


def _changes(
    request: ingest_pb2.PublishDocumentsRequest, workspace: str, max_bytes: int
) -> list[DocumentChange]:
    changes = []
    for i, doc in enumerate(request.documents):
        field = f"documents[{i}]"
        if len(doc.content.encode()) > max_bytes:
            raise convert.InvalidField(f"{field}.content", f"larger than {max_bytes} bytes")
        if doc.version < 0:
            raise convert.InvalidField(f"{field}.version", "must not be negative")
        timestamp = doc.timestamp.ToNanoseconds() / 1e9 if doc.HasField("timestamp") else None
        changes.append(
            DocumentChange(
                workspace=workspace,
                doc_id=_doc_id(f"{field}.doc_id", doc.doc_id),
                version=doc.version or time.time_ns(),
                deleted=False,
                content=doc.content,
                file_path=doc.file_path,
                metadata=dict(doc.metadata),
                timestamp=timestamp if timestamp is not None else time.time(),
            )
        )
    return changes


class IngestServicer(ingest_pb2_grpc.IngestServiceServicer):
    def __init__(
        self,
        publisher: Publisher,
        topic: str,
        docs: DocumentStore,
        workspace: str,
        max_document_bytes: int,
        progress: Callable[[], Awaitable[tuple[int, int]]],
    ) -> None:
        self._progress = progress
        self._publisher = publisher
        self._topic = topic
        self._docs = docs
        self._workspace = workspace
        self._max_bytes = max_document_bytes

    async def PublishDocuments(
        self, request: ingest_pb2.PublishDocumentsRequest, context: Context
    ) -> ingest_pb2.PublishDocumentsResponse:
        try:
            workspace = convert.workspace_of(request.workspace, self._workspace)
            changes = _changes(request, workspace, self._max_bytes)
        except convert.InvalidField as exc:
            await abort_invalid(context, exc)
        return await self._publish(changes)

    async def DeleteDocuments(
        self, request: ingest_pb2.DeleteDocumentsRequest, context: Context
    ) -> ingest_pb2.DeleteDocumentsResponse:
        try:
            workspace = convert.workspace_of(request.workspace, self._workspace)
            changes = [
                DocumentChange(workspace, _doc_id(f"doc_ids[{i}]", d), time.time_ns(), True)
                for i, d in enumerate(request.doc_ids)
            ]
        except convert.InvalidField as exc:
            await abort_invalid(context, exc)
        published = await self._publish(changes)
        return ingest_pb2.DeleteDocumentsResponse(results=published.results)

    async def GetDocumentStatus(
        self, request: ingest_pb2.GetDocumentStatusRequest, context: Context
    ) -> ingest_pb2.GetDocumentStatusResponse:
        try:
            workspace = convert.workspace_of(request.workspace, self._workspace)
            ids = [_doc_id(f"doc_ids[{i}]", d) for i, d in enumerate(request.doc_ids)]
        except convert.InvalidField as exc:
            await abort_invalid(context, exc)
        records = await self._docs.get_many(workspace, ids)
        return ingest_pb2.GetDocumentStatusResponse(
            documents=[convert.status_pb(r) for r in records]
        )

    async def ListDocuments(
        self, request: ingest_pb2.ListDocumentsRequest, context: Context
    ) -> ingest_pb2.ListDocumentsResponse:
        try:
            workspace = convert.workspace_of(request.workspace, self._workspace)
            size, after = _page(request)
        except convert.InvalidField as exc:
            await abort_invalid(context, exc)
        state = convert.STATE_FROM_PROTO.get(request.state)
        records = await self._docs.list(workspace, state, size + 1, after)
        token = _token(records[size - 1].doc_id) if len(records) > size else ""
        return ingest_pb2.ListDocumentsResponse(
            documents=[convert.status_pb(r) for r in records[:size]], next_page_token=token
        )

    async def GetIndexingProgress(
        self, request: ingest_pb2.GetIndexingProgressRequest, context: Context
    ) -> ingest_pb2.GetIndexingProgressResponse:
        documents, merges = await self._progress()
        return ingest_pb2.GetIndexingProgressResponse(
            pending_document_events=documents, pending_graph_merges=merges
        )

    async def _publish(self, changes: list[DocumentChange]) -> ingest_pb2.PublishDocumentsResponse:
        await self._publisher.publish(self._topic, [encode(change) for change in changes])
        return ingest_pb2.PublishDocumentsResponse(
            results=[ingest_pb2.PublishResult(doc_id=c.doc_id, version=c.version) for c in changes]
        )


def _page(request: ingest_pb2.ListDocumentsRequest) -> tuple[int, str]:
    if not 0 <= request.page_size <= MAX_PAGE_SIZE:
        raise convert.InvalidField("page_size", f"must be between 0 and {MAX_PAGE_SIZE}")
    if request.state and request.state not in convert.STATE_FROM_PROTO:
        raise convert.InvalidField("state", f"unknown state {request.state}")
    try:
        after = base64.urlsafe_b64decode(request.page_token.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        raise convert.InvalidField("page_token", "not a token from ListDocuments") from None
    return request.page_size or DEFAULT_PAGE_SIZE, after


def _token(doc_id: str) -> str:
    return base64.urlsafe_b64encode(doc_id.encode()).decode()
