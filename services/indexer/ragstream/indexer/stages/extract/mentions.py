"""Stage 1, step 6: what an extractor finds in the added chunks, as mentions for the ledger.

`MentionExtraction` runs the configured extractor over a document's added chunks, a bounded
number at once, and turns each chunk's entities and relations into mentions.

Within one chunk an entity or relation is mentioned once: duplicates keep the longer
description (as LightRAG's gleaning does). A relation endpoint the extractor did not also
list as an entity gets an entity mention of type "unknown", described by the relation, so
the graph never holds an edge to a node nobody mentions and deletes stay exact.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Protocol

from ragstream.common.models import Chunk, Mention, MentionKind, relation_key
from ragstream.indexer.stages.extract.names import entity_key
from ragstream.indexer.stages.extract.records import Extractor

UNKNOWN_TYPE = "unknown"


class EntityLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def description(self) -> str: ...


class RelationLike(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def keywords(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def weight(self) -> float: ...


class MentionExtraction:
    """The added chunks' mentions, in chunk order, `concurrency` chunks at most at once."""

    def __init__(self, extractor: Extractor, concurrency: int = 4) -> None:
        self._extractor = extractor
        self._slots = asyncio.Semaphore(concurrency)

    async def __call__(self, added: Sequence[Chunk]) -> list[list[Mention]]:
        return list(await asyncio.gather(*(self._one(chunk) for chunk in added)))

    async def _one(self, chunk: Chunk) -> list[Mention]:
        async with self._slots:
            result = await self._extractor.extract(chunk.content)
        return to_mentions(chunk, result.entities, result.relations, entity_key)


def to_mentions(
    chunk: Chunk,
    entities: Sequence[EntityLike],
    relations: Sequence[RelationLike],
    key_of: Callable[[str], str],
) -> list[Mention]:
    """The chunk's mentions: entities first (sorted by key), then relations."""
    found: dict[str, Mention] = {}
    for entity in entities:
        key = key_of(entity.name)
        if key:
            mention = _entity(chunk, key, entity.name, entity.type, entity.description)
            found[key] = _longer(found.get(key), mention)
    linked: dict[str, Mention] = {}
    for relation in relations:
        a, b = key_of(relation.source), key_of(relation.target)
        if not a or not b or a == b:
            continue
        for key, name in ((a, relation.source), (b, relation.target)):
            if key not in found:
                found[key] = _entity(chunk, key, name, UNKNOWN_TYPE, relation.description)
        mention = _relation(chunk, a, b, relation)
        linked[mention.key] = _longer(linked.get(mention.key), mention)
    return [found[k] for k in sorted(found)] + [linked[k] for k in sorted(linked)]


def _entity(chunk: Chunk, key: str, name: str, type_: str, description: str) -> Mention:
    return Mention(
        workspace=chunk.workspace,
        chunk_id=chunk.id,
        doc_id=chunk.doc_id,
        kind=MentionKind.ENTITY,
        key=key,
        name=name.strip(),
        type=type_ or UNKNOWN_TYPE,
        description=description.strip(),
        file_path=chunk.file_path,
    )


def _relation(chunk: Chunk, a: str, b: str, relation: RelationLike) -> Mention:
    source, target = sorted((a, b))
    return Mention(
        workspace=chunk.workspace,
        chunk_id=chunk.id,
        doc_id=chunk.doc_id,
        kind=MentionKind.RELATION,
        key=relation_key(a, b),
        source=source,
        target=target,
        keywords=relation.keywords.strip(),
        description=relation.description.strip(),
        weight=float(relation.weight),
        file_path=chunk.file_path,
    )


def _longer(current: Mention | None, new: Mention) -> Mention:
    if current is None or len(new.description) > len(current.description):
        return new
    return current
