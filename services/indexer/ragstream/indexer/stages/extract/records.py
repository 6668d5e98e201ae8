"""What an extractor returns for one chunk, and the one interface every extractor implements.

The records keep names as written; keys (entity_key, relation_key) are computed from them
when mentions are written, so spelling variants of one entity meet in stage 2.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from ragstream.common.models import relation_key
from ragstream.indexer.stages.extract.names import entity_key


@dataclass(frozen=True, slots=True)
class ExtractedEntity:
    name: str
    """As written in the text, cleaned (no wrapping quotes or brackets, at most 256 chars)."""
    type: str
    """Lowercase, spaces as underscores (see names.valid_entity_type)."""
    description: str


@dataclass(frozen=True, slots=True)
class ExtractedRelation:
    """An undirected relation: (source, target) and (target, source) are the same relation."""

    source: str
    target: str
    keywords: str
    """Comma-separated, ", " between keywords."""
    description: str
    weight: float = 1.0
    """Strength as given by the model, or the co-occurrence count (NLP extractor)."""

    @property
    def key(self) -> str:
        return relation_key(entity_key(self.source), entity_key(self.target))


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """Everything one extractor found in one chunk."""

    entities: tuple[ExtractedEntity, ...] = ()
    relations: tuple[ExtractedRelation, ...] = ()
    cache_keys: tuple[str, ...] = ()
    """LLM cache keys of the calls that produced this result, so the chunk can remember them."""
    warnings: tuple[str, ...] = ()
    """Problems that did not stop extraction (malformed records dropped, gleaning skipped)."""


class Extractor(Protocol):
    """Entities and relations of one chunk of text; the LLM and the NLP extractor both are one."""

    @property
    def name(self) -> str:
        """Which extractor, e.g. "nlp" or "llm:openai:gpt-4o-mini"; recorded with the index."""
        ...

    async def extract(self, text: str) -> ExtractionResult: ...


def merge_entities(*passes: Iterable[ExtractedEntity]) -> tuple[ExtractedEntity, ...]:
    """One record per entity key, in first-seen order; the longer description wins.

    Used to combine an extraction pass with its gleaning passes (and repeats within a pass):
    a later, more detailed record replaces a terse one, a later terse one changes nothing.
    """
    merged: dict[str, ExtractedEntity] = {}
    for records in passes:
        for record in records:
            key = entity_key(record.name)
            kept = merged.get(key)
            if kept is None or len(record.description) > len(kept.description):
                merged[key] = record
    return tuple(merged.values())


def merge_relations(*passes: Iterable[ExtractedRelation]) -> tuple[ExtractedRelation, ...]:
    """One record per undirected pair, in first-seen order; the longer description wins."""
    merged: dict[str, ExtractedRelation] = {}
    for records in passes:
        for record in records:
            key = record.key
            kept = merged.get(key)
            if kept is None or len(record.description) > len(kept.description):
                merged[key] = record
    return tuple(merged.values())
