"""Server reflection v1 on a real `ragstream serve` (the `server` fixture of conftest.py), asked
by a plain gRPC client.

The client encodes with the v1alpha message classes: the two protocols share every message
and field number, so this is the v1 protocol on the wire; only the method path differs.
"""

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2

pytestmark = pytest.mark.e2e
V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"


def ask(
    channel: grpc.Channel, *requests: reflection_pb2.ServerReflectionRequest
) -> list[reflection_pb2.ServerReflectionResponse]:
    call = channel.stream_stream(
        V1_METHOD,
        request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
        response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
    )
    return list(call(iter(requests), timeout=10))


def files_of(
    response: reflection_pb2.ServerReflectionResponse,
) -> list[descriptor_pb2.FileDescriptorProto]:
    assert response.WhichOneof("message_response") == "file_descriptor_response", response
    return [
        descriptor_pb2.FileDescriptorProto.FromString(raw)
        for raw in response.file_descriptor_response.file_descriptor_proto
    ]


def test_v1_lists_every_service(channel: grpc.Channel) -> None:
    (reply,) = ask(channel, reflection_pb2.ServerReflectionRequest(list_services=""))
    names = {service.name for service in reply.list_services_response.service}
    assert names == {
        "ragstream.v1.QueryService",
        "ragstream.v1.IngestService",
        "ragstream.v1.GraphService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1.ServerReflection",
        "grpc.reflection.v1alpha.ServerReflection",
    }


def test_v1_describes_the_api_with_its_language_options(channel: grpc.Channel) -> None:
    replies = ask(
        channel,
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="ragstream.v1.QueryService"),
        reflection_pb2.ServerReflectionRequest(file_by_filename="ragstream/v1/ingest.proto"),
    )
    query_files = {f.name: f for f in files_of(replies[0])}
    query = query_files["ragstream/v1/query.proto"]
    assert "ragstream/v1/common.proto" in query_files  # its dependency comes along
    assert [m.name for m in query.service[0].method] == ["Query", "StreamQuery", "Retrieve"]
    assert query.options.go_package.endswith("/gen/go/ragstream/v1;ragstreamv1")
    assert query.options.java_package == "io.github.ragstream.v1"
    assert query.options.csharp_namespace == "Ragstream.V1"
    ingest = files_of(replies[1])[0]  # the asked-for file first, then its dependencies
    assert ingest.name == "ragstream/v1/ingest.proto"
    assert ingest.service[0].name == "IngestService"
    (graph,) = files_of(
        ask(
            channel,
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="ragstream.v1.GraphService"
            ),
        )[0]
    )
    assert [m.name for m in graph.service[0].method] == [
        "SearchEntities",
        "GetEntity",
        "GetRelation",
        "GetNeighbourhood",
        "GetGraphStats",
        "ListCommunities",
        "GetCommunity",
        "GetEntityCommunities",
    ]
    assert graph.options.java_outer_classname == "GraphProto"


def test_v1_describes_itself(channel: grpc.Channel) -> None:
    (reply,) = ask(
        channel,
        reflection_pb2.ServerReflectionRequest(
            file_containing_symbol="grpc.reflection.v1.ServerReflection"
        ),
    )
    pool = descriptor_pool.DescriptorPool()
    for file in files_of(reply):
        pool.Add(file)
    method = pool.FindServiceByName("grpc.reflection.v1.ServerReflection").methods[0]
    assert method.name == "ServerReflectionInfo"
    assert method.input_type.full_name == "grpc.reflection.v1.ServerReflectionRequest"
    assert method.client_streaming and method.server_streaming
    assert pool.FindFileByName("grpc/reflection/v1/reflection.proto").package == (
        "grpc.reflection.v1"
    )


def test_v1_reports_an_unknown_symbol_as_not_found(channel: grpc.Channel) -> None:
    (reply,) = ask(
        channel,
        reflection_pb2.ServerReflectionRequest(file_containing_symbol="ragstream.v1.NoSuch"),
    )
    assert reply.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
