"""Extraction's settings: `extraction` (indexer/stages/extract/)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_ENTITY_TYPES = (
    "person",
    "organization",
    "location",
    "event",
    "product",
    "technology",
    "method",
    "concept",
)
_FORBIDDEN_TYPE_CHARS = frozenset("'()<>|/\\")


class ExtractionConfig(BaseModel):
    """Entity and relation extraction (the LLM extractor; the NLP extractor has no settings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES
    """Types the model may assign; stored lowercase with spaces as underscores."""
    language: str = Field("auto", min_length=1, max_length=64)
    """Language of descriptions and keywords; "auto": the language of each chunk's text.
    Names are always kept as the text writes them."""
    gleaning: Literal["always", "adaptive", "never"] = "adaptive"
    """When to ask again for missed entities and relations: adaptive, only after a reply that
    looks incomplete (no completion marker, cut at the output limit, or far fewer entities
    than the chunk's capitalized names); always, after every reply (LightRAG); never."""
    max_gleaning: int = Field(1, ge=0, le=5)
    """Most follow-up calls per chunk; a follow-up whose prompt would not fit the model's
    context (llm.context_tokens - llm.max_output_tokens) is skipped."""

    @field_validator("entity_types")
    @classmethod
    def _normalized_types(cls, types: tuple[str, ...]) -> tuple[str, ...]:
        normalized: list[str] = []
        for raw in types:
            entity_type = "_".join(raw.lower().split())
            if not entity_type or _FORBIDDEN_TYPE_CHARS.intersection(entity_type):
                raise ValueError(f"entity type {raw!r} is empty or contains one of '()<>|/\\")
            if entity_type not in normalized:
                normalized.append(entity_type)
        if not normalized:
            raise ValueError("at least one entity type is required")
        return tuple(normalized)
