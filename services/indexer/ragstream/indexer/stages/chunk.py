"""Stage 1, steps 3-4: chunk a document and diff the chunks against the stored ones.

Chunk ids hash (workspace, doc_id, content), so an edit keeps the ids of the chunks it did
not touch and only the changed chunks are embedded, written and (later) extracted again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.models import Chunk
from ragstream.common.providers.embedding import Embedder
from ragstream.common.text.chunking import chunk_text
from ragstream.common.text.language import served
from ragstream.common.text.provenance import PAGE_BREAK, locate
from ragstream.common.text.semantic import semantic_chunks


def chunk_id(workspace: str, doc_id: str, content: str) -> str:
    digest = hashlib.sha256(f"{workspace}\x00{doc_id}\x00{content}".encode()).hexdigest()
    return f"chunk-{digest[:32]}"


async def chunk_document(
    workspace: str,
    doc_id: str,
    content: str,
    file_path: str,
    cfg: ChunkingConfig,
    embedder: Embedder,
) -> list[Chunk]:
    """The document's chunks in order, each with its provenance (common/text/provenance.py);
    a repeated identical chunk is kept once. The
    semantic strategy embeds the document's sentences with `embedder` (indexing priority);
    a document in a language the embedder does not serve is cut by tokens instead, since its
    sentences would get zero vectors with nothing to compare (providers/gate.py)."""
    if cfg.strategy == "semantic" and served(content, embedder.languages):
        pieces = await semantic_chunks(content, cfg, embedder)
    else:
        # On a worker thread: tokenizing a long document must not hold up the event loop, and
        # tiktoken releases the GIL while it encodes.
        pieces = await asyncio.to_thread(chunk_text, content, cfg)
    chunks: list[Chunk] = []
    seen: set[str] = set()
    places = locate(content, [piece.content for piece in pieces])
    for piece, place in zip(pieces, places, strict=True):
        # Page breaks are provenance, not text: the chunk's text (and so its id) has none.
        text = piece.content.replace(PAGE_BREAK, "")
        cid = chunk_id(workspace, doc_id, text)
        if cid in seen:
            continue
        seen.add(cid)
        chunks.append(
            Chunk(cid, workspace, doc_id, text, piece.tokens, len(chunks), file_path, place)
        )
    return chunks


@dataclass(frozen=True, slots=True)
class ChunkDiff:
    kept: list[Chunk]
    added: list[Chunk]
    removed: list[str]


def diff_chunks(stored_ids: Sequence[str], chunks: Sequence[Chunk]) -> ChunkDiff:
    """Which chunks are new, which stay, and which stored ids are gone."""
    stored = set(stored_ids)
    current = {chunk.id for chunk in chunks}
    return ChunkDiff(
        kept=[chunk for chunk in chunks if chunk.id in stored],
        added=[chunk for chunk in chunks if chunk.id not in stored],
        removed=[cid for cid in stored_ids if cid not in current],
    )
