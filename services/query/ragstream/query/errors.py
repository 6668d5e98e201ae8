"""gRPC error replies with structured details (google.rpc.BadRequest for field errors)."""

from __future__ import annotations

from typing import NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from ragstream.query.convert import InvalidField


async def abort_invalid(
    context: grpc.aio.ServicerContext[object, object], exc: InvalidField
) -> NoReturn:
    """INVALID_ARGUMENT with a BadRequest field violation naming the field."""
    detail = any_pb2.Any()
    detail.Pack(
        error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=exc.field, description=str(exc))
            ]
        )
    )
    status = status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=str(exc), details=[detail])
    rich = rpc_status.to_status(status)
    await context.abort(rich.code, rich.details, trailing_metadata=rich.trailing_metadata)
