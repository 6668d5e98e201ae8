"""gRPC calls with request bytes sent as they are, never encoded by a stub."""

from __future__ import annotations

import grpc
import pytest

BAD_UTF8 = bytes.fromhex("1202fffe")
"""Field 2 (RetrieveRequest.query, PublishDocumentsRequest.documents) holding ff fe: neither
UTF-8 text nor a message."""
UNDECODABLE = {"bad-utf8": BAD_UTF8, "truncated": b"\x0a\x05ab", "garbage": b"\xff\xff\xff\xff"}


def raw_error(
    channel: grpc.Channel,
    method: str,
    body: bytes,
    streaming: bool = False,
    metadata: tuple[tuple[str, str | bytes], ...] = (),
) -> grpc.Call:
    """The error the server answers `body` with (the call must fail)."""
    same = bytes  # the bytes go out, and would come back, untouched
    with pytest.raises(grpc.RpcError) as caught:
        if streaming:
            call = channel.unary_stream(method, same, same)
            list(call(body, timeout=30, metadata=metadata))
        else:
            channel.unary_unary(method, same, same)(body, timeout=30, metadata=metadata)
    error = caught.value
    assert isinstance(error, grpc.Call)
    return error
