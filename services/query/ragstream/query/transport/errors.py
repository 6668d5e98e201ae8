"""gRPC error replies with structured details (google.rpc.BadRequest, google.rpc.RetryInfo).

Messages name fields, limits and workspaces, never request values: those may be document text
or secrets, and error messages end up in clients' logs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from ragstream.query.transport.validation import Violation

Context = grpc.aio.ServicerContext[Any, Any]
RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"
"""gRPC's own retry hint: clients with a retry policy wait this long before retrying."""


async def abort_with(
    context: Context,
    code: int,
    message: str,
    details: Sequence[Message] = (),
    metadata: Sequence[tuple[str, str]] = (),
) -> NoReturn:
    """Aborts the call with a google.rpc.Status carrying `details` (packed as Any)."""
    packed = []
    for detail in details:
        entry = any_pb2.Any()
        entry.Pack(detail)
        packed.append(entry)
    status = status_pb2.Status(code=code, message=message, details=packed)
    rich = rpc_status.to_status(status)
    await context.abort(
        rich.code, rich.details, trailing_metadata=(*rich.trailing_metadata, *metadata)
    )


async def abort_invalid(context: Context, violations: Sequence[Violation]) -> NoReturn:
    """INVALID_ARGUMENT with one BadRequest field violation per broken rule."""
    shown = "; ".join(f"{v.field} {v.description}" for v in violations[:3])
    more = f" (and {len(violations) - 3} more)" if len(violations) > 3 else ""
    bad_request = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
            for v in violations
        ]
    )
    await abort_with(
        context, code_pb2.INVALID_ARGUMENT, f"invalid request: {shown}{more}", [bad_request]
    )


async def abort_overloaded(context: Context, what: str, retry_after_s: float) -> NoReturn:
    """RESOURCE_EXHAUSTED with google.rpc.RetryInfo and gRPC's pushback hint."""
    delay = duration_pb2.Duration()
    delay.FromMilliseconds(max(1, round(retry_after_s * 1000)))
    await abort_with(
        context,
        code_pb2.RESOURCE_EXHAUSTED,
        f"{what} at capacity; retry after {retry_after_s:.2f} s",
        [error_details_pb2.RetryInfo(retry_delay=delay)],
        [(RETRY_PUSHBACK_KEY, str(delay.ToMilliseconds()))],
    )
