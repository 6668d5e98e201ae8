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
    check: bool = True
    """With an LLM configured, pairs of entities whose names alone embed close (same or
    compatible types) that no rule joins are put to the LLM, in batches, and a pair it
    calls one thing joins (indexer/resolution/names.py, judge.py). Each pair's verdict is
    kept in the LLM cache, so the same pair is never asked twice. Without an LLM, or off:
    no names are embedded and only the rules join. Turning it on applies to the keys merged
    from then on (a key's name is embedded when it merges); re-index the workspace to apply
    it to all."""
    check_similarity: float = Field(0.9, ge=-1.0, le=1.0)
    """Cosine of two names' vectors from which the pair is put to the LLM. 0.9 suits the
    offline MiniLM; another embedding model spreads its cosines otherwise: count the pairs
    it gives on a kept index (tests/bench/bench_name_pairs.py --threshold) before changing."""
    check_neighbours: int = Field(16, ge=1, le=1000)
    """A name with this many other names at `check_similarity` or more is generic (a hub,
    such as "Route 26" among forty routes): it is put to the LLM with none of them."""
    check_batch: int = Field(20, ge=1, le=200)
    """Pairs asked in one LLM prompt."""
