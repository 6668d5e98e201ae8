"""Server reflection under both protocol names: grpc.reflection.v1 and v1alpha.

grpcio-reflection implements only v1alpha, while current clients (grpcurl, Postman, grpc-java
and grpc-go tooling) ask for v1 first. The two protocols are the same messages with the same
field numbers under another package name, so one servicer answers both: v1 calls are decoded
and encoded with the v1alpha message classes, which read and write the same bytes. The v1 file
descriptor is v1alpha's with the package renamed, added to the descriptor pool so that a
client can describe the v1 service itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import _async as reflection_aio
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

V1_PACKAGE = "grpc.reflection.v1"
V1_SERVICE_NAME = f"{V1_PACKAGE}.ServerReflection"
V1_FILE_NAME = "grpc/reflection/v1/reflection.proto"
V1_OPTIONS = descriptor_pb2.FileOptions(
    go_package="google.golang.org/grpc/reflection/grpc_reflection_v1",
    java_multiple_files=True,
    java_package="io.grpc.reflection.v1",
    java_outer_classname="ServerReflectionProto",
)
"""The options of the upstream grpc/reflection/v1/reflection.proto."""
SERVICE_NAMES = (V1_SERVICE_NAME, reflection.SERVICE_NAME)


def v1_file() -> descriptor_pb2.FileDescriptorProto:
    """The v1 reflection.proto: v1alpha's with the package (and every reference to it) renamed."""
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old = f".{proto.package}."
    proto.name = V1_FILE_NAME
    proto.package = V1_PACKAGE
    proto.options.CopyFrom(V1_OPTIONS)
    new = f".{V1_PACKAGE}."
    for message in proto.message_type:
        for field in message.field:
            if field.HasField("type_name"):  # set only on message and enum fields
                field.type_name = field.type_name.replace(old, new, 1)
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new, 1)
            method.output_type = method.output_type.replace(old, new, 1)
    return proto


def add_v1_descriptor(pool: descriptor_pool.DescriptorPool) -> None:
    """Adds the v1 file to `pool` unless it holds one already (from another package)."""
    try:
        pool.FindFileByName(V1_FILE_NAME)
    except KeyError:
        pool.Add(v1_file())


def enable(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Serves reflection v1 and v1alpha on `server`, listing `service_names` and both
    reflection services."""
    add_v1_descriptor(descriptor_pool.Default())
    servicer: Any = reflection_aio.ReflectionServicer((*service_names, *SERVICE_NAMES))
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    v1 = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": v1}),)
    )
