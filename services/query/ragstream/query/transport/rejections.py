"""Why a call is refused, independent of the transport that carries the answer.

The gate and the servicers raise `Rejected`: a google.rpc code, a message and structured
details (google.rpc.BadRequest, google.rpc.RetryInfo). gRPC turns it into the call's status
(`errors.abort_rejected`), HTTP into a google.rpc.Status JSON body with the matching HTTP
code (`http.status`), so both transports refuse alike from one place.

Messages name fields, limits and workspaces, never request values: those may be document
text or secrets, and error messages end up in clients' logs.
"""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import any_pb2, duration_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2

from ragstream.query.transport.validation import Violation

SHOWN_VIOLATIONS = 3
"""Violations spelt out in the message; all of them are in the BadRequest detail."""


class Rejected(Exception):
    """A refused call: `code` is a google.rpc.Code value."""

    def __init__(
        self,
        code: int,
        message: str,
        details: Sequence[Message] = (),
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = tuple(details)
        self.retry_after_s = retry_after_s
        """When to retry (RESOURCE_EXHAUSTED); also in the RetryInfo detail."""

    def status(self) -> status_pb2.Status:
        """As a google.rpc.Status, the details packed as Any."""
        packed = []
        for detail in self.details:
            entry = any_pb2.Any()
            entry.Pack(detail)
            packed.append(entry)
        return status_pb2.Status(code=self.code, message=self.message, details=packed)


def invalid(violations: Sequence[Violation], what: str = "invalid request") -> Rejected:
    """INVALID_ARGUMENT with one BadRequest field violation per broken rule."""
    shown = "; ".join(f"{v.field} {v.description}" for v in violations[:SHOWN_VIOLATIONS])
    extra = len(violations) - SHOWN_VIOLATIONS
    more = f" (and {extra} more)" if extra > 0 else ""
    bad_request = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
            for v in violations
        ]
    )
    return Rejected(code_pb2.INVALID_ARGUMENT, f"{what}: {shown}{more}", [bad_request])


def overloaded(what: str, retry_after_s: float) -> Rejected:
    """RESOURCE_EXHAUSTED with google.rpc.RetryInfo."""
    delay = duration_pb2.Duration()
    delay.FromMilliseconds(max(1, round(retry_after_s * 1000)))
    return Rejected(
        code_pb2.RESOURCE_EXHAUSTED,
        f"{what} at capacity; retry after {retry_after_s:.2f} s",
        [error_details_pb2.RetryInfo(retry_delay=delay)],
        retry_after_s=delay.ToMilliseconds() / 1000,
    )


def undecodable(reason: str) -> Rejected:
    """INVALID_ARGUMENT for bytes that are not the request message (protobuf's reason names
    the message type and what is wrong, never the bytes)."""
    return Rejected(code_pb2.INVALID_ARGUMENT, f"undecodable request: {reason}")


def unauthenticated(reason: str) -> Rejected:
    return Rejected(code_pb2.UNAUTHENTICATED, reason)


def denied(workspace: str) -> Rejected:
    return Rejected(
        code_pb2.PERMISSION_DENIED, f"this token does not grant workspace {workspace!r}"
    )


def denied_all() -> Rejected:
    return Rejected(
        code_pb2.PERMISSION_DENIED,
        "an empty workspace asks for every workspace, which needs a token granted '*': "
        "name the workspace",
    )


def deadline_passed() -> Rejected:
    return Rejected(code_pb2.DEADLINE_EXCEEDED, "the call's deadline passed")


def not_found(what: str) -> Rejected:
    return Rejected(code_pb2.NOT_FOUND, what)
