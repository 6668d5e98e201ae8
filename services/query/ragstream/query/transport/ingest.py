"""gRPC IngestService: publishes document changes to the bus and reports their status.

Publishing returns once the events are durable on the bus; the indexer applies them
asynchronously, and GetDocumentStatus shows how far it got. Each publish result also says
what the indexer will do with its event (applied, a duplicate, older than the stored version
or than a delete), judged against the document store before the events go out. Requests
arrive validated (the gate of either transport runs `validation` first), so the handlers
only convert.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from ragstream.common.bus.progress import Progress
from ragstream.common.bus.protocols import Publisher
from ragstream.common.bus.spans import producer_span
from ragstream.common.events import DocumentChange, encode
from ragstream.common.models import DocumentRecord
from ragstream.common.storage.protocols import DocumentStore
from ragstream.common.versions import Outcome, delete_outcome, upsert_outcome
from ragstream.query.transport import convert
from ragstream.query.transport.gate import CallContext
from ragstream.query.transport.import_graph import graph_change
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc

DEFAULT_PAGE_SIZE = 100
Judge = Callable[[DocumentRecord | None, DocumentChange], Outcome]
"""What the indexer will do with a change, given the document's stored record."""


def _changes(request: ingest_pb2.PublishDocumentsRequest, workspace: str) -> list[DocumentChange]:
    changes = []
    for doc in request.documents:
        timestamp = doc.timestamp.ToNanoseconds() / 1e9 if doc.HasField("timestamp") else None
        changes.append(
            DocumentChange(
                workspace=workspace,
                doc_id=doc.doc_id,
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
        progress: Callable[[str | None], Awaitable[Progress]],
    ) -> None:
        self._progress = progress
        self._publisher = publisher
        self._topic = topic
        self._docs = docs
        self._workspace = workspace

    async def PublishDocuments(
        self, request: ingest_pb2.PublishDocumentsRequest, context: CallContext
    ) -> ingest_pb2.PublishDocumentsResponse:
        workspace = convert.workspace_of(request.workspace, self._workspace)
        return ingest_pb2.PublishDocumentsResponse(
            results=await self._publish(_changes(request, workspace), upsert_outcome)
        )

    async def DeleteDocuments(
        self, request: ingest_pb2.DeleteDocumentsRequest, context: CallContext
    ) -> ingest_pb2.DeleteDocumentsResponse:
        workspace = convert.workspace_of(request.workspace, self._workspace)
        changes = [DocumentChange(workspace, d, time.time_ns(), True) for d in request.doc_ids]
        return ingest_pb2.DeleteDocumentsResponse(
            results=await self._publish(changes, delete_outcome)
        )

    async def ImportGraph(
        self, request: ingest_pb2.ImportGraphRequest, context: CallContext
    ) -> ingest_pb2.ImportGraphResponse:
        workspace = convert.workspace_of(request.workspace, self._workspace)
        [result] = await self._publish([graph_change(request, workspace)], upsert_outcome)
        return ingest_pb2.ImportGraphResponse(result=result)

    async def GetDocumentStatus(
        self, request: ingest_pb2.GetDocumentStatusRequest, context: CallContext
    ) -> ingest_pb2.GetDocumentStatusResponse:
        workspace = convert.workspace_of(request.workspace, self._workspace)
        records = await self._docs.get_many(workspace, list(request.doc_ids))
        return ingest_pb2.GetDocumentStatusResponse(
            documents=[convert.status_pb(r) for r in records]
        )

    async def ListDocuments(
        self, request: ingest_pb2.ListDocumentsRequest, context: CallContext
    ) -> ingest_pb2.ListDocumentsResponse:
        workspace = convert.workspace_of(request.workspace, self._workspace)
        size = request.page_size or DEFAULT_PAGE_SIZE
        after = convert.decode_page_token(request.page_token)
        state = convert.STATE_FROM_PROTO.get(request.state)
        records = await self._docs.list(workspace, state, size + 1, after)
        token = convert.encode_page_token(records[size - 1].doc_id) if len(records) > size else ""
        return ingest_pb2.ListDocumentsResponse(
            documents=[convert.status_pb(r) for r in records[:size]], next_page_token=token
        )

    async def GetIndexingProgress(
        self, request: ingest_pb2.GetIndexingProgressRequest, context: CallContext
    ) -> ingest_pb2.GetIndexingProgressResponse:
        # An empty workspace is every workspace here (the gate let only a "*" token through).
        progress = await self._progress(request.workspace or None)
        return ingest_pb2.GetIndexingProgressResponse(
            pending_document_events=progress.documents, pending_graph_merges=progress.merges
        )

    async def _publish(
        self, changes: list[DocumentChange], judge: Judge
    ) -> list[ingest_pb2.PublishResult]:
        """Publishes the changes; each result says what the indexer will do with its event,
        judged against the stored records before publishing (see common.versions)."""
        workspace = changes[0].workspace  # one request, one workspace; never empty
        records = await self._docs.get_many(workspace, [c.doc_id for c in changes])
        stored = {record.doc_id: record for record in records}
        with producer_span(self._topic, len(changes)):
            # Encoded inside the span: each record carries its context to the indexer.
            await self._publisher.publish(self._topic, [encode(change) for change in changes])
        return [
            convert.publish_result_pb(c, stored.get(c.doc_id), judge(stored.get(c.doc_id), c))
            for c in changes
        ]
