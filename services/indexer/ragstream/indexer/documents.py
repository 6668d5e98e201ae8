"""Stage 1 of indexing, per document (docs/architecture.md, "Indexing").

Every step is idempotent, so a replayed or duplicated event leaves the index as one
delivery would: a version not newer than the stored one is skipped unless the stored
record says the work was interrupted (PROCESSING; the rule is `common.versions.is_stale`),
and chunk writes are keyed by content.
Deleting a document the index does not know, or has already deleted, is a no-op: it leaves
no record behind, and a retried delete (whose version is the time the server received it)
changes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import replace

from opentelemetry import trace

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.events import DocumentChange
from ragstream.common.instruments import record_document, record_document_failure
from ragstream.common.models import Chunk, Collection, DocState, DocumentRecord, Mention
from ragstream.common.providers import ProviderError
from ragstream.common.providers.embedding import Embedder
from ragstream.common.storage.protocols import DocumentStore, SearchStore
from ragstream.common.telemetry import annotate, mark_failed, own, span
from ragstream.common.versions import content_hash, is_stale
from ragstream.indexer.errors import DocumentError
from ragstream.indexer.stages.chunk import chunk_document, diff_chunks
from ragstream.indexer.stages.curated import curated_chunks
from ragstream.indexer.stages.extract.mentions import MentionExtraction
from ragstream.indexer.stages.extract.parser import ExtractionFormatError
from ragstream.indexer.stages.ledger import Ledger
from ragstream.indexer.stages.write import refresh_kept_chunks, write_chunks

log = logging.getLogger(__name__)


class DocumentIndexer:
    """Applies document changes to the document store, the search store and the ledger."""

    def __init__(
        self,
        docs: DocumentStore,
        search: SearchStore,
        embedder: Embedder,
        chunking: ChunkingConfig,
        extract: MentionExtraction,
        ledger: Ledger,
    ) -> None:
        self._docs = docs
        self._search = search
        self._embedder = embedder
        self._chunking = chunking
        self._extract_mentions = extract
        self._ledger = ledger

    async def apply(self, change: DocumentChange) -> DocumentRecord | None:
        """The document's record after the change; None for the delete of an unknown one."""
        attributes = own(workspace=change.workspace, version=change.version)
        with span("index_document", attributes=attributes) as current:
            stored = await self._docs.get(change.workspace, change.doc_id)
            if change.deleted and (stored is None or stored.state is DocState.DELETED):
                log.debug("skip delete of %s: not in the index", change.key)
                annotate(current, state="skipped")
                return stored
            if stored is not None and is_stale(stored, change):
                log.debug("skip %s v%d: stored v%d", change.key, change.version, stored.version)
                annotate(current, state="skipped")
                return stored
            record = await self._index(stored, change)
            annotate(current, state=record.state.value, chunks=len(record.chunk_ids))
            if record.state is DocState.FAILED:
                record_document_failure(DocumentError.__name__)
            else:
                record_document(record.state.value)
            return record

    async def _index(self, stored: DocumentRecord | None, change: DocumentChange) -> DocumentRecord:
        started = time.monotonic()
        record = self._start(stored, change)
        await self._docs.put(record)
        try:
            if change.deleted:
                await self._remove_chunks(change.workspace, record.chunk_ids, set())
                record = replace(
                    record, state=DocState.DELETED, chunk_ids=(), entity_count=0, relation_count=0
                )
            else:
                record = await self._upsert(record, stored, change)
        except DocumentError as exc:
            mark_failed(trace.get_current_span(), exc)
            record = replace(record, state=DocState.FAILED, error=str(exc))
        record.processing_ms = (time.monotonic() - started) * 1000
        record.updated_at = time.time()
        await self._docs.put(record)
        return record

    def _start(self, stored: DocumentRecord | None, change: DocumentChange) -> DocumentRecord:
        now = time.time()
        base = stored or DocumentRecord(
            workspace=change.workspace,
            doc_id=change.doc_id,
            version=change.version,
            state=DocState.PENDING,
            created_at=now,
        )
        # The stored chunk list stays until the new one is written: an interrupted run is
        # replayed against it, so no chunk is ever orphaned.
        return replace(
            base,
            version=change.version,
            state=DocState.PROCESSING,
            error="",
            updated_at=now,
        )

    async def _upsert(
        self, record: DocumentRecord, stored: DocumentRecord | None, change: DocumentChange
    ) -> DocumentRecord:
        if not change.content.strip():
            raise DocumentError("document has no text content")
        digest = content_hash(change.content)
        curated = curated_chunks(change) if change.graph else None
        with span("chunk") as current:
            chunks = curated.chunks if curated else await self._chunk(change)
            diff = diff_chunks(record.chunk_ids, chunks)
            annotate(current, chunks=len(chunks), added=len(diff.added), removed=len(diff.removed))
        # Extraction first, so a document that fails it leaves nothing behind in the stores.
        extracted = curated.of(diff.added) if curated else await self._extract(diff.added)
        with span("write", attributes=own(chunks=len(diff.added))):
            await write_chunks(diff.added, change, self._embedder, self._search)
            changed = stored is None or _document_fields_changed(stored, change)
            await refresh_kept_chunks(diff.kept, change, self._search, changed)
            touched = await self._ledger.record(change.workspace, diff.added, extracted)
        await self._remove_chunks(change.workspace, diff.removed, touched)
        chunk_ids = tuple(chunk.id for chunk in chunks)
        entities, relations = await self._ledger.counts(change.workspace, chunk_ids)
        return replace(
            record,
            state=DocState.PROCESSED,
            content_hash=digest,
            file_path=change.file_path,
            metadata=dict(change.metadata),
            timestamp=change.timestamp,
            chunk_ids=chunk_ids,
            entity_count=entities,
            relation_count=relations,
        )

    async def _chunk(self, change: DocumentChange) -> list[Chunk]:
        return await chunk_document(
            change.workspace,
            change.doc_id,
            change.content,
            change.file_path,
            self._chunking,
            self._embedder,
        )

    async def _extract(self, added: Sequence[Chunk]) -> list[list[Mention]]:
        try:
            with span("extract", attributes=own(chunks=len(added))) as current:
                extracted = await self._extract_mentions(added)
                annotate(current, mentions=sum(len(m) for m in extracted))
                return extracted
        except (ProviderError, ExtractionFormatError) as exc:
            # The provider already retried; a reply in no known format will not improve by
            # blocking the partition. The document is marked failed; the others proceed.
            # The status error is shown to every caller: it names the failure, never the
            # model's reply, which can quote the document.
            reason = (
                "the model's reply held no records"
                if isinstance(exc, ExtractionFormatError)
                else str(exc)
            )
            raise DocumentError(f"entity extraction failed: {reason}") from exc

    async def _remove_chunks(
        self, workspace: str, chunk_ids: Sequence[str], touched: set[str]
    ) -> None:
        """Removes chunks and their mentions, publishing every touched key (see Ledger)."""
        with span("remove", attributes=own(chunks=len(chunk_ids))):
            touched = touched | await self._ledger.keys_of(workspace, chunk_ids)
            await self._search.delete(Collection.CHUNKS, workspace, chunk_ids)
            await self._ledger.publish(workspace, touched)
            await self._ledger.forget(workspace, chunk_ids)


def _document_fields_changed(stored: DocumentRecord, change: DocumentChange) -> bool:
    return (
        dict(stored.metadata) != dict(change.metadata)
        or stored.timestamp != change.timestamp
        or stored.file_path != change.file_path
    )
