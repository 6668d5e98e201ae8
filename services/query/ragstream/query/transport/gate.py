"""The checks every QueryService, IngestService and GraphService call passes, whichever
transport carries it (gRPC: `interceptors.GrpcGate`; HTTP/JSON: `http.routes`).

In this order: authentication (bearer token -> UNAUTHENTICATED), decoding of the request,
which the transport does between `authenticate` and `check`, so that nothing is parsed before
the caller is known (undecodable bytes -> INVALID_ARGUMENT), the request rules of
`validation` (INVALID_ARGUMENT with google.rpc.BadRequest), tenancy (the token must grant the
request's workspace -> PERMISSION_DENIED), admission (a deadline-aware queue per expensive
family, fair across workspaces -> RESOURCE_EXHAUSTED with google.rpc.RetryInfo), and then the
handler runs under the call's deadline (-> DEADLINE_EXCEEDED), with its admission slot bound
as the `ragstream.query.lease` its stages lend back while they wait on a remote model. A
query that will embed its question is announced to the embedding scheduler from the moment
it passes the checks (`ragstream.common.providers.forecast`), so that a burst waiting for
admission slots is batched as one. Each
refusal is a `rejections.Rejected`, which the transport turns into its own status, so both
transports refuse identically.

The deadline cancels the handler, so the cancellation reaches every await below it (admission
queue, embedding scheduler, search, LLM stream, reranker), and the openai client closes its
HTTP request, so the model stops generating for nobody. gRPC's core cancels a call's task at
its deadline by itself; for the other transport `running` starts a timer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from google.protobuf.message import Message

from ragstream.common.providers.forecast import Forecast
from ragstream.common.providers.scheduler import Priority
from ragstream.query.lease import bound
from ragstream.query.transport import rejections
from ragstream.query.transport.admission import Admission, Overloaded
from ragstream.query.transport.auth import Grant, TokenAuthenticator, Unauthenticated
from ragstream.query.transport.convert import workspace_of
from ragstream.query.transport.validation import Limits, validate
from ragstream.v1 import query_pb2

log = logging.getLogger(__name__)
QUERIES = "queries"
PUBLISHES = "publishes"
FAMILIES: dict[str, str] = {
    "/ragstream.v1.QueryService/Query": QUERIES,
    "/ragstream.v1.QueryService/StreamQuery": QUERIES,
    "/ragstream.v1.QueryService/Retrieve": QUERIES,
    "/ragstream.v1.IngestService/PublishDocuments": PUBLISHES,
    "/ragstream.v1.IngestService/DeleteDocuments": PUBLISHES,
    "/ragstream.v1.IngestService/ImportGraph": PUBLISHES,
    "/ragstream.v1.GraphService/SearchEntities": QUERIES,
    "/ragstream.v1.GraphService/GetNeighbourhood": QUERIES,
    "/ragstream.v1.GraphService/GetGraphStats": QUERIES,
}
"""The expensive methods (by gRPC method path) and the admission family each belongs to;
the rest (status, listing, progress, single entities) are cheap reads and run at once."""

EMBEDDING_REQUESTS = frozenset(
    f"ragstream.v1.{name}Request" for name in ("Query", "StreamQuery", "Retrieve")
)
"""Requests that embed their question (unless their mode is bypass): announced to the
embedding scheduler's forecast while they wait and run (`Gate.running`)."""

EMPTY_MEANS_ALL = frozenset({"ragstream.v1.GetIndexingProgressRequest"})
"""Requests whose empty workspace means every workspace (not the default one): they need a
token granted "*"."""

Metadata = Iterable[tuple[str, Any]] | None


class CallContext(Protocol):
    """What a servicer reads of its call besides the request: gRPC's ServicerContext has
    it, and `Deadline` gives it to calls of the other transport."""

    def time_remaining(self) -> float | None:
        """Seconds before the call's deadline; None without one."""
        ...


@dataclass(frozen=True, slots=True)
class Deadline:
    """The CallContext of an HTTP call: its deadline on the time.monotonic() clock."""

    at: float | None

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        return cls(None if seconds is None else time.monotonic() + seconds)

    def time_remaining(self) -> float | None:
        return None if self.at is None else max(0.0, self.at - time.monotonic())


class Gate:
    def __init__(
        self,
        limits: Limits,
        default_workspace: str,
        authenticator: TokenAuthenticator | None = None,
        admissions: Mapping[str, Admission] | None = None,
        forecast: Forecast | None = None,
    ) -> None:
        self._limits = limits
        self._default_workspace = default_workspace
        self._auth = authenticator
        self._admissions = dict(admissions or {})
        self._forecast = forecast

    def screen(self, request: Message, metadata: Metadata) -> None:
        """Authentication, request rules and tenancy; raises Rejected at the first failure."""
        self.check(request, self.authenticate(metadata))

    def authenticate(self, metadata: Metadata) -> Grant | None:
        """The caller's grant (None with authentication off); Rejected when unknown."""
        if self._auth is None:
            return None
        try:
            return self._auth.authenticate(metadata)
        except Unauthenticated as exc:
            raise rejections.unauthenticated(str(exc)) from None

    def check(self, request: Message, grant: Grant | None) -> None:
        """Request rules and tenancy for a caller already authenticated.

        Raises KeyError for a request type without rules (see `validation.validate`)."""
        violations = validate(request, self._limits)
        if violations:
            raise rejections.invalid(violations)
        if grant is None or "workspace" not in request.DESCRIPTOR.fields_by_name:
            return  # workspace-less calls need only a known token
        named: str = request.workspace  # type: ignore[attr-defined]
        if not named and request.DESCRIPTOR.full_name in EMPTY_MEANS_ALL:
            if not grant.all_workspaces:
                log.info("token %r denied the all-workspace total", grant.name)
                raise rejections.denied_all()
            return
        workspace = workspace_of(named, self._default_workspace)
        if not grant.allows(workspace):
            log.info("token %r denied workspace %r", grant.name, workspace)
            raise rejections.denied(workspace)

    def workspace(self, request: Message) -> str:
        """The workspace a request acts on ("" for workspace-less requests): its admission
        queue."""
        if "workspace" not in request.DESCRIPTOR.fields_by_name:
            return ""
        return workspace_of(request.workspace, self._default_workspace)  # type: ignore[attr-defined]

    @contextlib.asynccontextmanager
    async def running(
        self,
        method: str,
        remaining_s: float | None,
        request: Message | None = None,
        timer: bool = True,
    ) -> AsyncIterator[None]:
        """Admission and the deadline around a handler; the deadline covers the queue wait.
        `method` is the gRPC method path, `remaining_s` the time the caller allows, and
        `request` the decoded request, which names the queue the call waits in (its
        workspace) and whether it will embed its question, which the embedding scheduler
        is told from now on (`forecast`). gRPC passes `timer=False`: its core ends a call at
        the deadline, and a timer of ours that fired while a response was being sent would
        abort a call with a send in flight, which gRPC refuses."""
        admission = self._admissions.get(FAMILIES.get(method, ""))
        scope = asyncio.timeout(remaining_s if timer else None)
        workspace = "" if request is None else self.workspace(request)
        slot = admission.slot(workspace, remaining_s) if admission else contextlib.nullcontext()
        coming: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
        if self._forecast is not None and request is not None and embeds(request):
            coming = self._forecast.coming(Priority.QUERY)
        try:
            with coming:
                async with scope, slot as lease:
                    with bound(lease):  # the stages lend the slot back around remote waits
                        yield
        except Overloaded as exc:
            raise rejections.overloaded(exc.family, exc.retry_after_s) from None
        except TimeoutError:
            if not scope.expired():
                raise  # a timeout of some inner call, not the deadline: the handler's to report
            raise rejections.deadline_passed() from None


def embeds(request: Message) -> bool:
    """Whether the request will embed its question."""
    if request.DESCRIPTOR.full_name not in EMBEDDING_REQUESTS:
        return False
    return bool(request.params.mode != query_pb2.QUERY_MODE_BYPASS)  # type: ignore[attr-defined]


def admissions(queries: tuple[int, int], publishes: tuple[int, int]) -> dict[str, Admission]:
    """One Admission per family from (concurrency, queue) pairs."""
    return {
        QUERIES: Admission(QUERIES, *queries),
        PUBLISHES: Admission(PUBLISHES, *publishes),
    }
