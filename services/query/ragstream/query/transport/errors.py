"""gRPC error replies with structured details (google.rpc.BadRequest, google.rpc.RetryInfo):
a `rejections.Rejected` becomes the call's status, its details in the rich status trailer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NoReturn

import grpc
from google.protobuf.message import Message
from grpc_status import rpc_status

from ragstream.query.transport.rejections import Rejected

Context = grpc.aio.ServicerContext[Any, Any]
RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"
"""gRPC's own retry hint: clients with a retry policy wait this long before retrying."""


async def abort_rejected(context: Context, rejected: Rejected) -> NoReturn:
    """Aborts the call with the rejection's google.rpc.Status; RESOURCE_EXHAUSTED also
    carries gRPC's pushback hint."""
    rich = rpc_status.to_status(rejected.status())
    metadata: Sequence[tuple[str, str]] = ()
    if rejected.retry_after_s is not None:
        metadata = [(RETRY_PUSHBACK_KEY, str(max(1, round(rejected.retry_after_s * 1000))))]
    await context.abort(
        rich.code, rich.details, trailing_metadata=(*rich.trailing_metadata, *metadata)
    )


async def abort_with(
    context: Context, code: int, message: str, details: Sequence[Message] = ()
) -> NoReturn:
    """Aborts the call with a google.rpc.Status carrying `details` (packed as Any)."""
    await abort_rejected(context, Rejected(code, message, details))
