"""Stage 1, steps 6-7: keep the mentions ledger in step with a document's chunks.

The order of the writes makes every step safe to replay after a crash:
  1. mentions of added chunks are written (re-extraction is cached, so a replay is free);
  2. the keys of removed chunks are read while their mentions still exist;
  3. (the caller deletes the removed chunks from the search store);
  4. the touched keys are published to the graph-merge topic (durable);
  5. only then are the removed chunks' mentions deleted.
A crash before 5 replays 2-5 with the same keys; a crash after 5 has already published
them. Stage 2 ignores mentions whose chunk is gone, so a merge that runs between 3 and 5
already sees the document as it is now.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragstream.common.bus.protocols import Publisher
from ragstream.common.bus.spans import producer_span
from ragstream.common.events import MergeKey, encode_merge
from ragstream.common.models import Chunk, Mention, MentionKind, is_relation_key, same_as_entity
from ragstream.common.storage.protocols import MentionStore
from ragstream.common.telemetry import trace_headers
from ragstream.indexer.resolution.evidence import found_in, is_block, ledger_rows


class Ledger:
    def __init__(
        self,
        mentions: MentionStore,
        publisher: Publisher,
        merge_topic: str,
        resolution: bool = False,
    ) -> None:
        """`resolution`: record each chunk's same-as evidence with its mentions."""
        self._mentions = mentions
        self._publisher = publisher
        self._topic = merge_topic
        self._resolution = resolution

    async def record(
        self, workspace: str, added: Sequence[Chunk], extracted: Sequence[list[Mention]]
    ) -> set[str]:
        """Writes the added chunks' mentions (and evidence); returns the keys they touch.
        A blocking key is left out: the entity keys the chunk adds there reach its other
        members (a removed chunk's blocking keys are published, see `publish`)."""
        by_chunk = {
            chunk.id: [*mentions, *self._evidence(chunk, mentions)]
            for chunk, mentions in zip(added, extracted, strict=True)
        }
        if by_chunk:
            await self._mentions.replace_mentions(workspace, by_chunk)
        keys = {m.key for mentions in by_chunk.values() for m in mentions}
        return {key for key in keys if not is_block(same_as_entity(key) or "")}

    def _evidence(self, chunk: Chunk, mentions: list[Mention]) -> list[Mention]:
        if not self._resolution:
            return []
        entities = [m for m in mentions if m.kind is MentionKind.ENTITY]
        return ledger_rows(chunk, found_in(chunk.content, entities))

    async def keys_of(self, workspace: str, chunk_ids: Sequence[str]) -> set[str]:
        return await self._mentions.keys_of_chunks(workspace, chunk_ids)

    async def publish(self, workspace: str, keys: set[str]) -> None:
        if not keys:
            return
        with producer_span(self._topic, len(keys)):
            # Encoded inside the span: each merge continues this document's trace.
            traced = trace_headers()
            # Evidence about an entity is merged as that entity (stage 2 regroups it).
            merged = {same_as_entity(key) or key for key in keys}
            records = [encode_merge(MergeKey(workspace, key), traced) for key in sorted(merged)]
            await self._publisher.publish(self._topic, records)

    async def forget(self, workspace: str, chunk_ids: Sequence[str]) -> None:
        await self._mentions.delete_chunks(workspace, chunk_ids)

    async def counts(self, workspace: str, chunk_ids: Sequence[str]) -> tuple[int, int]:
        """(entities, relations) the chunks mention."""
        found = await self._mentions.keys_of_chunks(workspace, chunk_ids)
        keys = {key for key in found if same_as_entity(key) is None}
        relations = sum(1 for key in keys if is_relation_key(key))
        return len(keys) - relations, relations
