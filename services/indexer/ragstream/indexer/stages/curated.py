"""Stage 1 for a curated graph source (`ImportGraph`): its records are its chunks and their
mentions, in place of chunking and extraction.

Each record becomes one chunk, whose text states the record (so it is searchable and cited
like any chunk), and whose mentions are the record itself, turned into mentions by the same
`to_mentions` as an extractor's findings. From there the document goes the way of every
other: the chunks are diffed by id (a re-import touches only the records that changed), the
mentions go into the ledger, stage 2 merges them with extracted mentions of the same keys,
and a delete of the source removes its chunks and so exactly its mentions.
"""

from __future__ import annotations

from dataclasses import dataclass

from ragstream.common.events import DocumentChange
from ragstream.common.graph_records import CuratedEntity, Record, RecordError, parse_content
from ragstream.common.models import Chunk, Mention
from ragstream.common.text.tokens import count_tokens
from ragstream.indexer.errors import DocumentError
from ragstream.indexer.stages.chunk import chunk_id
from ragstream.indexer.stages.extract.mentions import to_mentions
from ragstream.indexer.stages.extract.names import entity_key


@dataclass(frozen=True, slots=True)
class CuratedChunks:
    chunks: list[Chunk]
    mentions: dict[str, list[Mention]]
    """By chunk id."""

    def of(self, added: list[Chunk]) -> list[list[Mention]]:
        return [self.mentions[chunk.id] for chunk in added]


def statement(record: Record) -> str:
    """The record as a sentence of text: what the chunk holds and search matches."""
    if isinstance(record, CuratedEntity):
        kind = f" ({record.type})" if record.type else ""
        return f"{record.name}{kind}: {record.description}".rstrip(": ")
    keywords = f" ({record.keywords})" if record.keywords else ""
    return f"{record.source} – {record.target}{keywords}: {record.description}".rstrip(": ")


def curated_chunks(change: DocumentChange) -> CuratedChunks:
    """The source's chunks, one per distinct record in order, with their mentions."""
    try:
        records = parse_content(change.content)
    except RecordError as exc:
        raise DocumentError(f"graph records: {exc}") from None
    chunks: list[Chunk] = []
    mentions: dict[str, list[Mention]] = {}
    for record in records:
        text = statement(record)
        cid = chunk_id(change.workspace, change.doc_id, text)
        if cid in mentions:
            continue
        chunk = Chunk(
            cid, change.workspace, change.doc_id, text, count_tokens(text), len(chunks),
            change.file_path,
        )  # fmt: skip
        chunks.append(chunk)
        mentions[cid] = _mentions(chunk, record)
    return CuratedChunks(chunks, mentions)


def _mentions(chunk: Chunk, record: Record) -> list[Mention]:
    if isinstance(record, CuratedEntity):
        return to_mentions(chunk, [record], [], entity_key)
    # The endpoints are named, not described, by a relation record: they get entity
    # mentions without the relation's description (to_mentions would lend it to them).
    ends = [CuratedEntity(record.source), CuratedEntity(record.target)]
    return to_mentions(chunk, ends, [record], entity_key)
