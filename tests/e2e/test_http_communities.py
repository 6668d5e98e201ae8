"""The community reads on the HTTP/JSON port, against a server holding the demo corpus:
the same answers as gRPC (ListCommunities, GetCommunity, GetEntityCommunities), by GET
and by POST, and bad input refused with 400 naming the field, an unknown id or entity
with 404."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from ragstream.v1 import graph_pb2, graph_pb2_grpc
from tests.e2e.conftest import DEMO_WORKSPACE
from tests.support.http_json import call
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
COMPANY = "halvorsen%20aquatics"


def get(server: ServeProcess, path: str) -> tuple[int, Any]:
    assert server.http_address is not None
    return call(server.http_address, path)


def violation(reply: Any) -> str:
    field: str = reply["details"][0]["fieldViolations"][0]["field"]
    return field


def test_the_community_routes_answer_as_grpc_does(demo_http_server: ServeProcess) -> None:
    status, listed = get(demo_http_server, f"/v1/graph/communities?workspace={DEMO_WORKSPACE}")
    communities = listed["communities"]
    assert status == 200 and len(communities) >= 3
    ratings = [c["report"]["rating"] for c in communities]
    assert ratings == sorted(ratings, reverse=True) and all(c["level"] == 0 for c in communities)
    with grpc.insecure_channel(demo_http_server.address) as channel:
        stub = graph_pb2_grpc.GraphServiceStub(channel)
        over_grpc = stub.ListCommunities(graph_pb2.ListCommunitiesRequest(workspace=DEMO_WORKSPACE))
    assert [c["communityId"] for c in communities] == [
        c.community_id for c in over_grpc.communities
    ]
    first = communities[0]["communityId"]
    path = f"/v1/graph/community?workspace={DEMO_WORKSPACE}&communityId={first}"
    status, one = get(demo_http_server, path)
    community = one["community"]
    assert status == 200 and len(community["entityKeys"]) == community["size"] > 1
    assert community["report"]["title"] == communities[0]["report"]["title"]
    member = community["entityKeys"][0]
    body = {"workspace": DEMO_WORKSPACE, "name": member}
    assert demo_http_server.http_address is not None
    status, path_of = call(demo_http_server.http_address, "/v1/graph/entity/communities", body)
    assert status == 200 and path_of["entityKey"] == member
    assert path_of["communities"][0]["communityId"] == first
    assert [c["level"] for c in path_of["communities"]] == list(range(len(path_of["communities"])))


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/v1/graph/communities?level=-1", "level"),
        ("/v1/graph/communities?limit=1001", "limit"),
        ("/v1/graph/communities?level=top", "level"),
        ("/v1/graph/communities?colour=red", "colour"),
        ("/v1/graph/community?communityId=%20", "community_id"),
        ("/v1/graph/community", "community_id"),
        ("/v1/graph/entity/communities?name=", "name"),
    ],
)
def test_bad_community_requests_are_400_naming_the_field(
    demo_http_server: ServeProcess, path: str, field: str
) -> None:
    joiner = "&" if "?" in path else "?"
    status, reply = get(demo_http_server, f"{path}{joiner}workspace={DEMO_WORKSPACE}")
    assert (status, reply["code"]) == (400, 3), reply
    assert violation(reply) == field


def test_an_unknown_community_or_entity_is_404(demo_http_server: ServeProcess) -> None:
    ws = f"workspace={DEMO_WORKSPACE}"
    status, reply = get(demo_http_server, f"/v1/graph/community?{ws}&communityId=nothing")
    assert (status, reply["code"]) == (404, 5)
    of = f"/v1/graph/entity/communities?{ws}&name="
    status, reply = get(demo_http_server, f"{of}nobody%20at%20all")
    assert (status, reply["code"]) == (404, 5)
    status, reply = get(demo_http_server, f"{of}{COMPANY}")
    assert status == 200 and reply["communities"]
