"""Communities' settings: `communities` (indexer/communities/, indexer/stages/communities.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class CommunitiesConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    """Keep each workspace's communities current after every merge batch (stage 2)."""
    max_size: int = Field(10, ge=2, le=100_000)
    """A community with more members is split into a level below (GraphRAG's
    max_cluster_size)."""
    resolution: float = Field(1.0, gt=0.0, le=100.0)
    """Modularity's resolution: higher gives more, smaller communities."""
    seed: int = Field(0xDECAF, ge=0)
    """Leiden's seed: a rebuild of the same graph is the same partition."""
    exact_max_entities: int = Field(50_000, ge=0, le=10_000_000)
    """Up to this many related entities in a workspace, every batch rebuilds its communities
    from the whole graph (seeded Leiden over the edges sorted by key, ids from content): the
    communities are then a function of the graph alone, the same whatever the order of the
    events. Above it, the frontier update from the previous partition (cheaper, but its
    result depends on the batches' history), bounded by `max_drift`."""
    max_drift: float = Field(0.02, ge=0.0, le=1.0)
    """How far the incremental partition's modularity may fall below a rebuild's of the
    same graph (relative) before the rebuild replaces it."""
    check_every: int = Field(20, ge=1)
    """Community batches of a workspace between two drift checks (each check is one full
    rebuild, kept only past `max_drift`)."""
    settle_s: float = Field(30.0, ge=0.0, le=3600.0)
    """Before each batch the community step waits, at most this long, until stages 1 and 2
    have nothing queued: a burst of documents changes a community many times, and its
    report is then written once."""
    busy_share: float = Field(0.25, gt=0.0, le=1.0)
    """While stages 1 and 2 have work queued, the community step takes at most about this
    share of the time: after a batch that ran d seconds it waits up to d * (1 - share) /
    share (and at least `settle_s`) for them to drain. The last batch after a burst still
    sees the whole graph, so the result is the same; 1 turns the bound off."""
    batch_size: int = Field(100_000, ge=1, le=1_000_000)
    """Community events (touched keys) read in one poll: a whole burst, so that it is one
    batch."""
