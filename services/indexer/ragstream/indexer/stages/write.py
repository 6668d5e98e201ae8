"""Stage 1, step 5: embed the added chunks and write them to the search store."""

from __future__ import annotations

from collections.abc import Sequence

from ragstream.common.events import DocumentChange
from ragstream.common.models import Chunk, Collection, SearchRecord, Vector
from ragstream.common.providers.embedding import Embedder
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.text.analyzer import analyze


def chunk_record(chunk: Chunk, change: DocumentChange, vector: Vector) -> SearchRecord:
    return SearchRecord(
        id=chunk.id,
        workspace=chunk.workspace,
        text=chunk.content,
        terms=tuple(analyze(chunk.content)),
        vector=vector,
        doc_ids=(chunk.doc_id,),
        metadata=dict(change.metadata),
        timestamp=change.timestamp,
        attrs={
            "file_path": chunk.file_path,
            "order": chunk.order,
            "tokens": chunk.tokens,
            **chunk.provenance.attrs(),
        },
    )


async def write_chunks(
    chunks: Sequence[Chunk], change: DocumentChange, embedder: Embedder, store: SearchStore
) -> None:
    """Embeds and upserts the chunks (idempotent: ids are content hashes)."""
    if not chunks:
        return
    vectors = await embedder.embed([chunk.content for chunk in chunks])
    records = [chunk_record(c, change, v) for c, v in zip(chunks, vectors, strict=True)]
    await store.upsert(Collection.CHUNKS, records)


async def refresh_kept_chunks(
    chunks: Sequence[Chunk], change: DocumentChange, store: SearchStore, document_changed: bool
) -> None:
    """Rewrites the kept chunks that moved (an edit before them shifts their offsets, order,
    maybe pages or section) or, when `document_changed`, all of them for the document's new
    metadata, timestamp or path. Their stored vectors are reused: nothing is embedded."""
    if not chunks:
        return
    stored = await store.get(Collection.CHUNKS, change.workspace, [c.id for c in chunks])
    by_id = {chunk.id: chunk for chunk in chunks}
    fresh = [chunk_record(by_id[record.id], change, record.vector) for record in stored]
    moved = [
        record
        for record, old in zip(fresh, stored, strict=True)
        if document_changed or dict(record.attrs) != dict(old.attrs)
    ]
    if moved:
        await store.upsert(Collection.CHUNKS, moved)
