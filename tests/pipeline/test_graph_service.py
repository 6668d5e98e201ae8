"""GraphService on the demo corpus, indexed in-process: over gRPC behind the gate (with
tokens), and the same calls on NebulaGraph at statement and result level (the NebulaGraph
test double holding the same graph), which must answer exactly as the embedded store does."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message
from grpc_status import rpc_status

from ragstream.cli import demo_data
from ragstream.common.config import NebulaConfig
from ragstream.common.events import DocumentChange
from ragstream.common.providers.scheduler import Priority
from ragstream.common.storage.nebula import NebulaGraphStore
from ragstream.query.community_api import CommunityReader
from ragstream.query.graph_api import GraphReader
from ragstream.query.main import build_server, build_servicers
from ragstream.query.transport.graph import GraphServicer
from ragstream.v1 import graph_pb2, graph_pb2_grpc
from ragstream.v1.graph_pb2 import (
    GetCommunityRequest,
    GetEntityCommunitiesRequest,
    ListCommunitiesRequest,
)
from tests.support.nebula_double import NebulaDouble
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline

WS = "demo"
TOKEN = "demo-reader-secret"
COMPANY = "Halvorsen Aquatics"
FOUNDERS = {"Ingrid Halvorsen", "Tomasz Brejcha"}
PRODUCTS = {"Skua", "Skua 3", "Tern", "Tern S3", "Petrel 2", "Gannet Fleet"}
AUTH = (("authorization", f"Bearer {TOKEN}"),)
SEARCH = graph_pb2.SearchEntitiesRequest(workspace=WS, query="Halvorsen")
ENTITY = graph_pb2.GetEntityRequest(workspace=WS, name=COMPANY, include_chunks=True)
RELATION = graph_pb2.GetRelationRequest(
    workspace=WS, source=COMPANY, target="ingrid halvorsen", include_chunks=True
)
AROUND = graph_pb2.GetNeighbourhoodRequest(workspace=WS, name=COMPANY)
WIDER = graph_pb2.GetNeighbourhoodRequest(workspace=WS, name=COMPANY, depth=2)
STATS = graph_pb2.GetGraphStatsRequest(workspace=WS, top=10)
REQUESTS: list[tuple[str, Message]] = [
    ("SearchEntities", SEARCH),
    ("SearchEntities", graph_pb2.SearchEntitiesRequest(workspace=WS, query="seal", limit=30)),
    ("GetEntity", ENTITY),
    ("GetRelation", RELATION),
    ("GetNeighbourhood", AROUND),
    (
        "GetNeighbourhood",
        graph_pb2.GetNeighbourhoodRequest(workspace=WS, name="Tern S3", depth=2, max_nodes=500),
    ),
    ("GetGraphStats", STATS),
    ("ListCommunities", graph_pb2.ListCommunitiesRequest(workspace=WS)),
    ("GetEntityCommunities", graph_pb2.GetEntityCommunitiesRequest(workspace=WS, name=COMPANY)),
]


async def index_demo(pipeline: Pipeline) -> None:
    corpus = sorted(demo_data.CORPUS.iterdir())
    changes = [DocumentChange(WS, f.name, 1, False, f.read_text("utf-8"), f.name) for f in corpus]
    await pipeline.publish(changes)
    await pipeline.idle()


@pytest.fixture
async def pipeline(tmp_path: Path) -> AsyncIterator[Pipeline]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(f'[[tokens]]\nname = "reader"\ntoken = "{TOKEN}"\nworkspaces = ["{WS}"]\n')
    settings = embedded_settings(tmp_path / "data", auth={"enabled": True, "tokens_file": tokens})
    async with running_pipeline(settings) as running:
        await index_demo(running)
        yield running


async def graph_stub(pipeline: Pipeline) -> AsyncIterator[graph_pb2_grpc.GraphServiceAsyncStub]:
    server = build_server(pipeline.settings, pipeline.backends, "127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            yield graph_pb2_grpc.GraphServiceStub(channel)
    finally:
        await server.stop(grace_s=0)


async def check_the_company(stub: graph_pb2_grpc.GraphServiceAsyncStub) -> None:
    found = await stub.SearchEntities(SEARCH, metadata=AUTH)
    hits = {hit.entity.name: hit.entity for hit in found.hits}
    assert hits[COMPANY].type == "organization"

    around = await stub.GetNeighbourhood(AROUND, metadata=AUTH)
    names = [node.entity.name for node in around.nodes]
    assert names[0] == COMPANY and around.nodes[0].hops == 0
    assert set(names) >= FOUNDERS | PRODUCTS, sorted(FOUNDERS | PRODUCTS - set(names))
    assert len(names) == len(set(names)) <= 50
    wider = await stub.GetNeighbourhood(WIDER, metadata=AUTH)
    assert len(wider.nodes) == 50 and wider.truncated  # max_nodes 0: 50
    keys = {node.entity.key for node in around.nodes}
    assert all({r.source_key, r.target_key} <= keys for r in around.relations)
    centre = around.nodes[0].entity.key
    joined = {r.source_key for r in around.relations} | {r.target_key for r in around.relations}
    assert keys <= joined and centre in joined
    assert all(node.hops == 1 for node in around.nodes[1:])

    entity = await stub.GetEntity(ENTITY, metadata=AUTH)
    assert entity.entity.degree == around.nodes[0].entity.degree > 40  # the corpus's hub
    assert entity.chunks and any(COMPANY in c.content for c in entity.chunks)
    assert {c.doc_id for c in entity.chunks} <= set(entity.entity.source_doc_ids)

    relation = (await stub.GetRelation(RELATION, metadata=AUTH)).relation
    assert (relation.source_key, relation.target_key) == ("halvorsen aquatics", "ingrid halvorsen")
    founder = (
        await stub.GetEntity(
            graph_pb2.GetEntityRequest(workspace=WS, name="Ingrid Halvorsen"), metadata=AUTH
        )
    ).entity
    assert relation.degree == entity.entity.degree + founder.degree

    stats = await stub.GetGraphStats(STATS, metadata=AUTH)
    assert stats.top_entities[0].name == COMPANY and stats.entity_count > 80
    degrees = [e.degree for e in stats.top_entities]
    assert degrees == sorted(degrees, reverse=True) and len(degrees) == 10


async def code_of(call: Any, request: Message, metadata: Any = AUTH) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(request, metadata=metadata)
    return caught.value.code()


async def check_refusals(stub: graph_pb2_grpc.GraphServiceAsyncStub) -> None:
    for method, request in REQUESTS:
        other = type(request)()
        other.CopyFrom(request)
        other.workspace = "other"  # type: ignore[attr-defined]
        call = getattr(stub, method)
        assert await code_of(call, other) == grpc.StatusCode.PERMISSION_DENIED, method
        assert await code_of(call, request, ()) == grpc.StatusCode.UNAUTHENTICATED, method
    unknown = graph_pb2.GetEntityRequest(workspace=WS, name="Nobody Atall")
    assert await code_of(stub.GetEntity, unknown) == grpc.StatusCode.NOT_FOUND
    apart = graph_pb2.GetRelationRequest(workspace=WS, source="Norway", target="Lin Haitao")
    assert await code_of(stub.GetRelation, apart) == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.GetNeighbourhood(
            graph_pb2.GetNeighbourhoodRequest(workspace=WS, name=COMPANY, depth=3), metadata=AUTH
        )
    status = rpc_status.from_call(caught.value)  # type: ignore[arg-type]
    assert status is not None and "depth" in str(status.details[0])


async def nebula_servicer(pipeline: Pipeline, double: NebulaDouble) -> GraphServicer:
    """A GraphService whose graph is a NebulaGraph store holding the embedded graph."""
    graph = await NebulaGraphStore.open(
        NebulaConfig(space_prefix="demo_graph"), connector=double.connector(), schema_poll_s=0.0
    )
    dump = await pipeline.dump(WS)
    await graph.upsert_nodes(WS, dump["nodes"])
    await graph.upsert_edges(WS, dump["edges"])
    stores, providers = pipeline.backends.stores, pipeline.backends.providers
    embedder = providers.embeddings.view(Priority.QUERY)
    reader = GraphReader(stores.search, graph, embedder, pipeline.settings.query)
    communities = CommunityReader(stores.communities, graph)
    return GraphServicer(reader, pipeline.settings.workspace, communities)


async def check_communities(stub: graph_pb2_grpc.GraphServiceAsyncStub) -> None:
    """The top level with reports, highest rated first; one community in full; the
    company's path down the hierarchy; an unknown id and a bad level refused."""
    listed = await stub.ListCommunities(ListCommunitiesRequest(workspace=WS), metadata=AUTH)
    ratings = [c.report.rating for c in listed.communities]
    assert len(ratings) >= 3 and ratings == sorted(ratings, reverse=True)
    assert all(c.level == 0 and c.report.title and not c.entity_keys for c in listed.communities)
    path = await stub.GetEntityCommunities(
        GetEntityCommunitiesRequest(workspace=WS, name=COMPANY), metadata=AUTH
    )
    assert path.entity_key == COMPANY.casefold() and path.communities[0].level == 0
    assert [c.level for c in path.communities] == list(range(len(path.communities)))
    leaf = path.communities[-1].community_id
    one = await stub.GetCommunity(
        GetCommunityRequest(workspace=WS, community_id=leaf), metadata=AUTH
    )
    assert path.entity_key in one.community.entity_keys
    assert one.community.size == len(one.community.entity_keys)
    unknown = GetCommunityRequest(workspace=WS, community_id="c-none")
    assert await code_of(stub.GetCommunity, unknown) == grpc.StatusCode.NOT_FOUND
    deep = ListCommunitiesRequest(workspace=WS, level=101)
    assert await code_of(stub.ListCommunities, deep) == grpc.StatusCode.INVALID_ARGUMENT


async def test_the_demo_graph_over_grpc_and_on_nebula(pipeline: Pipeline) -> None:
    async for stub in graph_stub(pipeline):
        await check_the_company(stub)
        await check_communities(stub)
        await check_refusals(stub)
    embedded = build_servicers(pipeline.settings, pipeline.backends).graph
    double = NebulaDouble(lag=1)
    nebula = await nebula_servicer(pipeline, double)
    statements = len(double.statements)
    for method, request in REQUESTS:
        expected = await getattr(embedded, method)(request, None)
        assert await getattr(nebula, method)(request, None) == expected, method
    assert len(double.statements) > statements  # the answers did come from NebulaGraph
