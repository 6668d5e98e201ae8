"""How far the indexer is behind: the document events and graph merges not yet committed.

Both zero means the index is current. `GetIndexingProgress`, `ingest --wait`, the
evaluations and the merge stage's settle wait all read it through this one function, for one
workspace (its tenants' view) or for all of them (workspace None: the admin-wide total).
"""

from __future__ import annotations

from dataclasses import dataclass

from ragstream.common.bus.protocols import Bus
from ragstream.common.bus.topics import Topics, community_group, merge_group


@dataclass(frozen=True, slots=True)
class Progress:
    documents: int
    """Document events stage 1 has not committed."""
    merges: int
    """Graph merges stage 2 has not committed, and the community updates after them."""

    @property
    def current(self) -> bool:
        return self.documents == 0 and self.merges == 0


async def indexing_progress(
    bus: Bus, topics: Topics, group_id: str, workspace: str | None = None
) -> Progress:
    """The backlog of `workspace` (its keys are `workspace/...` on both topics), or of every
    workspace when None."""
    documents = await bus.pending(group_id, [topics.documents], workspace)
    merges = await bus.pending(merge_group(group_id), [topics.graph_merge], workspace)
    merges += await bus.pending(community_group(group_id), [topics.communities], workspace)
    return Progress(documents, merges)
