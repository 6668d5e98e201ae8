"""Topic names, derived from one configurable prefix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Topics:
    prefix: str = "ragstream"

    @property
    def documents(self) -> str:
        """Document-change events; key `workspace/doc_id`."""
        return f"{self.prefix}.documents"

    @property
    def graph_merge(self) -> str:
        """Touched entity and relation keys; key = the entity or relation key."""
        return f"{self.prefix}.graph-merge"

    @property
    def communities(self) -> str:
        """Keys stage 2 merged, for the community step; key `workspace/`, so one workspace's
        events sit in one partition and one consumer owns its partition."""
        return f"{self.prefix}.communities"

    @property
    def documents_dlt(self) -> str:
        """Dead letters: document events that cannot be indexed, with the reason in headers."""
        return f"{self.prefix}.documents.dlt"


MERGE_GROUP_SUFFIX = ".graph-merge"


def merge_group(group_id: str) -> str:
    """Stage 2's consumer group: its own, so it scales and commits apart from stage 1."""
    return group_id + MERGE_GROUP_SUFFIX


COMMUNITY_GROUP_SUFFIX = ".communities"


def community_group(group_id: str) -> str:
    """The community step's consumer group."""
    return group_id + COMMUNITY_GROUP_SUFFIX
