"""gRPC GraphService: converts proto to domain, calls `graph_api.GraphReader`, converts back.

Requests arrive validated (the gate ran `validation` first); unset numbers take their
defaults here. An unknown entity or relation is NOT_FOUND.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TypeVar

from opentelemetry import trace

from ragstream.common.communities import CommunityRecord
from ragstream.common.telemetry import annotate
from ragstream.query.community_api import CommunityReader
from ragstream.query.graph_api import (
    EntityInfo,
    GraphReader,
    NotFound,
    RelationInfo,
    SourceText,
)
from ragstream.query.transport import rejections
from ragstream.query.transport.convert import workspace_of
from ragstream.query.transport.gate import CallContext
from ragstream.v1 import graph_pb2, graph_pb2_grpc

T = TypeVar("T")
DEFAULT_HITS = 10
DEFAULT_DEPTH = 1
DEFAULT_MAX_NODES = 50
DEFAULT_TOP = 10
DEFAULT_COMMUNITIES = 50


def entity_pb(info: EntityInfo) -> graph_pb2.Entity:
    n = info.node
    return graph_pb2.Entity(
        key=n.key,
        name=n.name,
        type=n.type,
        description=n.description,
        source_doc_ids=n.doc_ids,
        source_chunk_ids=n.source_ids,
        degree=info.degree,
        aliases=info.aliases,
    )


def relation_pb(info: RelationInfo) -> graph_pb2.Relation:
    e = info.edge
    return graph_pb2.Relation(
        source_key=e.source,
        target_key=e.target,
        source_name=info.source_name,
        target_name=info.target_name,
        keywords=e.keywords,
        description=e.description,
        weight=e.weight,
        source_doc_ids=e.doc_ids,
        source_chunk_ids=e.source_ids,
        degree=info.degree,
    )


def chunks_pb(chunks: Sequence[SourceText]) -> list[graph_pb2.SourceChunk]:
    return [
        graph_pb2.SourceChunk(
            chunk_id=c.chunk_id, doc_id=c.doc_id, file_path=c.file_path, content=c.content
        )
        for c in chunks
    ]


async def found(lookup: Awaitable[T]) -> T:
    """The lookup's result; an entity or relation the workspace lacks is NOT_FOUND."""
    try:
        return await lookup
    except NotFound as exc:
        raise rejections.not_found(str(exc)) from None


def community_pb(record: CommunityRecord, members: bool = False) -> graph_pb2.Community:
    report = record.report
    return graph_pb2.Community(
        community_id=record.id, level=record.level, parent_id=record.parent,
        size=len(record.members), entity_keys=record.members if members else (),
        report=None if report is None else graph_pb2.CommunityReport(
            title=report.title, summary=report.summary, rating=report.rating,
            rating_explanation=report.rating_explanation, writer=report.writer,
            findings=[
                graph_pb2.CommunityFinding(
                    summary=f.summary, explanation=f.explanation, entity_keys=f.entities,
                    relation_keys=f.relations, chunk_ids=f.chunks,
                )
                for f in report.findings
            ],
        ),
    )  # fmt: skip


class GraphServicer(graph_pb2_grpc.GraphServiceServicer):
    def __init__(self, reader: GraphReader, workspace: str, communities: CommunityReader) -> None:
        self._reader = reader
        self._workspace = workspace
        self._communities = communities

    def _ws(self, requested: str) -> str:
        workspace = workspace_of(requested, self._workspace)
        annotate(trace.get_current_span(), workspace=workspace)
        return workspace

    async def SearchEntities(
        self, request: graph_pb2.SearchEntitiesRequest, context: CallContext
    ) -> graph_pb2.SearchEntitiesResponse:
        found = await self._reader.search(
            self._ws(request.workspace), request.query, request.limit or DEFAULT_HITS
        )
        hits = [graph_pb2.EntityHit(entity=entity_pb(e), score=score) for e, score in found]
        return graph_pb2.SearchEntitiesResponse(hits=hits)

    async def GetEntity(
        self, request: graph_pb2.GetEntityRequest, context: CallContext
    ) -> graph_pb2.GetEntityResponse:
        workspace = self._ws(request.workspace)
        info = await found(self._reader.entity(workspace, request.name))
        chunks = await self._chunks(workspace, info.node.source_ids, request.include_chunks)
        return graph_pb2.GetEntityResponse(entity=entity_pb(info), chunks=chunks)

    async def GetRelation(
        self, request: graph_pb2.GetRelationRequest, context: CallContext
    ) -> graph_pb2.GetRelationResponse:
        workspace = self._ws(request.workspace)
        info = await found(self._reader.relation(workspace, request.source, request.target))
        chunks = await self._chunks(workspace, info.edge.source_ids, request.include_chunks)
        return graph_pb2.GetRelationResponse(relation=relation_pb(info), chunks=chunks)

    async def GetNeighbourhood(
        self, request: graph_pb2.GetNeighbourhoodRequest, context: CallContext
    ) -> graph_pb2.GetNeighbourhoodResponse:
        depth = request.depth or DEFAULT_DEPTH
        limit = request.max_nodes or DEFAULT_MAX_NODES
        workspace = self._ws(request.workspace)
        around = await found(self._reader.neighbourhood(workspace, request.name, depth, limit))
        nodes = [graph_pb2.NeighbourhoodNode(entity=entity_pb(e), hops=h) for e, h in around.nodes]
        return graph_pb2.GetNeighbourhoodResponse(
            nodes=nodes,
            relations=[relation_pb(r) for r in around.relations],
            truncated=around.truncated,
        )

    async def _chunks(
        self, workspace: str, chunk_ids: Sequence[str], wanted: bool
    ) -> list[graph_pb2.SourceChunk]:
        return chunks_pb(await self._reader.chunks(workspace, chunk_ids)) if wanted else []

    async def GetGraphStats(
        self, request: graph_pb2.GetGraphStatsRequest, context: CallContext
    ) -> graph_pb2.GetGraphStatsResponse:
        summary = await self._reader.summary(
            self._ws(request.workspace), request.top or DEFAULT_TOP
        )
        return graph_pb2.GetGraphStatsResponse(
            entity_count=summary.entities,
            relation_count=summary.relations,
            top_entities=[entity_pb(e) for e in summary.top],
        )

    async def ListCommunities(
        self, request: graph_pb2.ListCommunitiesRequest, context: CallContext
    ) -> graph_pb2.ListCommunitiesResponse:
        workspace, reader = self._ws(request.workspace), self._communities
        found = await reader.level(workspace, request.level, request.limit or DEFAULT_COMMUNITIES)
        return graph_pb2.ListCommunitiesResponse(communities=[community_pb(c) for c in found])

    async def GetCommunity(
        self, request: graph_pb2.GetCommunityRequest, context: CallContext
    ) -> graph_pb2.GetCommunityResponse:
        workspace, reader = self._ws(request.workspace), self._communities
        record = await found(reader.community(workspace, request.community_id))
        return graph_pb2.GetCommunityResponse(community=community_pb(record, members=True))

    async def GetEntityCommunities(
        self, request: graph_pb2.GetEntityCommunitiesRequest, context: CallContext
    ) -> graph_pb2.GetEntityCommunitiesResponse:
        workspace, reader = self._ws(request.workspace), self._communities
        key, path = await found(reader.path(workspace, request.name))
        communities = [community_pb(c) for c in path]
        return graph_pb2.GetEntityCommunitiesResponse(entity_key=key, communities=communities)
