"""GraphService's community reads: a level of the hierarchy, one community, and the
communities that hold an entity (its path from the top level down)."""

from __future__ import annotations

from ragstream.common.communities import CommunityRecord
from ragstream.common.models import entity_key
from ragstream.common.storage.protocols import CommunityStore, GraphStore
from ragstream.query.graph_api import NotFound


class CommunityReader:
    def __init__(self, communities: CommunityStore, graph: GraphStore) -> None:
        self._communities = communities
        self._graph = graph

    async def level(self, workspace: str, level: int, limit: int) -> list[CommunityRecord]:
        """The level's communities, highest rated first (unreported last), ties by id."""
        records = await self._communities.list(workspace, level)
        return sorted(records, key=_by_rating)[:limit]

    async def community(self, workspace: str, community_id: str) -> CommunityRecord:
        found = await self._communities.get(workspace, [community_id])
        if not found:
            raise NotFound(f"workspace {workspace!r} has no community {community_id!r}")
        return found[0]

    async def path(self, workspace: str, name: str) -> tuple[str, list[CommunityRecord]]:
        """The entity's key and its communities, top level first."""
        key = entity_key(name)
        if not await self._graph.get_nodes(workspace, [key]):
            raise NotFound(f"workspace {workspace!r} has no entity {name!r}")
        ids = (await self._communities.of_entities(workspace, [key])).get(key, [])
        return key, sorted(await self._communities.get(workspace, ids), key=lambda r: r.level)


def _by_rating(record: CommunityRecord) -> tuple[float, str]:
    return (-(record.report.rating if record.report else -1.0), record.id)
