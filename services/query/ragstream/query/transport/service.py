"""QueryService (gRPC and HTTP/JSON): converts proto to domain, calls the engine, converts
back."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from typing import TypedDict

from opentelemetry import trace

from ragstream.common.config import QueryDefaults
from ragstream.common.instruments import record_query
from ragstream.common.telemetry import annotate
from ragstream.common.timing import StageTimer
from ragstream.query.citations import cited_references
from ragstream.query.engine import QueryEngine
from ragstream.query.transport import convert
from ragstream.query.transport.gate import CallContext
from ragstream.query.types import QueryInput, Retrieval
from ragstream.v1 import query_pb2, query_pb2_grpc

AnyRequest = query_pb2.QueryRequest | query_pb2.StreamQueryRequest | query_pb2.RetrieveRequest


class Grounding(TypedDict):
    """What an answer is grounded on: the fields every query response carries."""

    context: query_pb2.Context
    references: Sequence[query_pb2.Reference]
    providers: query_pb2.Providers
    mode: query_pb2.QueryMode
    notes: Sequence[str]


class QueryServicer(query_pb2_grpc.QueryServiceServicer):
    def __init__(self, engine: QueryEngine, defaults: QueryDefaults, workspace: str) -> None:
        self._engine = engine
        self._defaults = defaults
        self._workspace = workspace

    async def Query(
        self, request: query_pb2.QueryRequest, context: CallContext
    ) -> query_pb2.QueryResponse:
        q = await self._input(request, context)
        timer = StageTimer()
        retrieval = await self._engine.retrieve(q, timer)
        response = query_pb2.QueryResponse(**self._grounding(q, retrieval))
        response.context_references.extend(response.references)
        if q.options.only_need_prompt:
            response.prompt = self._engine.prompt(q, retrieval)
        elif not q.options.only_need_context:
            response.answer = await self._engine.answer(q, retrieval, timer)
            del response.references[:]  # the answer's own: the passages it cites
            response.references.extend(
                convert.references_pb(cited_references(response.answer, retrieval.references))
            )
        response.timings.extend(_timings(timer))
        _record(q, "Query", timer)
        return response

    async def StreamQuery(
        self, request: query_pb2.StreamQueryRequest, context: CallContext
    ) -> AsyncIterator[query_pb2.StreamQueryResponse]:
        q = await self._input(request, context)
        timer = StageTimer()
        retrieval = await self._engine.retrieve(q, timer)
        yield query_pb2.StreamQueryResponse(context=self._retrieve_response(q, retrieval, timer))
        # aclosing: a stream closed early closes the answer's generator here, in this task.
        answer: list[str] = []
        async with aclosing(self._engine.stream_answer(q, retrieval, timer)) as deltas:
            async for delta in deltas:
                answer.append(delta)
                yield query_pb2.StreamQueryResponse(delta=delta)
        cited = cited_references("".join(answer), retrieval.references)
        end = query_pb2.StreamQueryEnd(
            timings=_timings(timer),
            providers=self._providers(),
            references=convert.references_pb(cited),
        )
        _record(q, "StreamQuery", timer)
        yield query_pb2.StreamQueryResponse(end=end)

    async def Retrieve(
        self, request: query_pb2.RetrieveRequest, context: CallContext
    ) -> query_pb2.RetrieveResponse:
        q = await self._input(request, context)
        timer = StageTimer()
        retrieval = await self._engine.retrieve(q, timer)
        _record(q, "Retrieve", timer)
        return self._retrieve_response(q, retrieval, timer)

    async def _input(self, request: AnyRequest, context: CallContext) -> QueryInput:
        # Already validated: the gate (gRPC interceptor or HTTP route) ran `validation` first.
        q = convert.query_input(
            request.workspace,
            request.query,
            request.params,
            request.filter,
            self._defaults,
            self._workspace,
            convert.deadline_of(context.time_remaining()),
        )
        annotate(trace.get_current_span(), workspace=q.workspace, mode=q.options.mode.value)
        return q

    def _retrieve_response(
        self, q: QueryInput, retrieval: Retrieval, timer: StageTimer
    ) -> query_pb2.RetrieveResponse:
        return query_pb2.RetrieveResponse(**self._grounding(q, retrieval), timings=_timings(timer))

    def _grounding(self, q: QueryInput, retrieval: Retrieval) -> Grounding:
        """The fields a QueryResponse and a RetrieveResponse share."""
        return Grounding(
            context=convert.context_pb(retrieval),
            references=convert.references_pb(retrieval.references),
            providers=self._providers(),
            mode=convert.MODE_TO_PROTO[q.options.mode],
            notes=retrieval.notes,
        )

    def _providers(self) -> query_pb2.Providers:
        return query_pb2.Providers(**self._engine.providers)


def _record(q: QueryInput, method: str, timer: StageTimer) -> None:
    record_query(q.options.mode.value, method, timer.elapsed_s, timer.items())


def _timings(timer: StageTimer) -> list[query_pb2.StageTiming]:
    return [query_pb2.StageTiming(stage=name, duration_ms=ms) for name, ms in timer.items()]
