"""Entity resolution's settings: `resolution` (indexer/resolution/, indexer/stages/resolve.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ResolutionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    """Record same-as evidence with each chunk (stage 1) and merge each alias group into one
    entity (stage 2). Off: entities merge by exact normalized name only. Turning it on or
    off applies to chunks indexed from then on; re-index the workspace to apply it to all."""
    max_group: int = Field(64, ge=2, le=10_000)
    """A component of the evidence graph with more keys than this is left unmerged: so many
    names joined by rules are a hub of generic names, not one thing."""
