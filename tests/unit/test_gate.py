"""The gate's gRPC interceptor on a real grpc.aio server, with a servicer that records its calls."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc
import pytest

from ragstream.common.providers.forecast import Forecast
from ragstream.common.providers.scheduler import Priority
from ragstream.query.transport.admission import Admission
from ragstream.query.transport.convert import deadline_of
from ragstream.query.transport.gate import embeds
from ragstream.query.transport.interceptors import QUERIES, Gate, GrpcGate
from ragstream.query.transport.validation import Limits
from ragstream.v1 import graph_pb2, query_pb2, query_pb2_grpc


class Recorder(query_pb2_grpc.QueryServiceServicer):
    """Answers Retrieve with the deadline it saw; sleeps when the query says "slow"."""

    def __init__(self) -> None:
        self.calls = 0
        self.workspaces: list[str] = []

    async def Retrieve(
        self, request: query_pb2.RetrieveRequest, context: Any
    ) -> query_pb2.RetrieveResponse:
        self.calls += 1
        self.workspaces.append(request.workspace)
        if request.query == "slow":
            await asyncio.sleep(0.5)
        deadline = deadline_of(context.time_remaining())
        left = None if deadline is None else deadline - time.monotonic()
        return query_pb2.RetrieveResponse(notes=["none" if left is None else f"{left:.3f}"])


Served: TypeAlias = "tuple[query_pb2_grpc.QueryServiceAsyncStub, Recorder]"


@pytest.fixture
async def stub() -> AsyncIterator[Served]:
    async with serving(Admission(QUERIES, 1, 0)) as served:
        yield served


@contextlib.asynccontextmanager
async def serving(admission: Admission) -> AsyncIterator[Served]:
    recorder = Recorder()  # type: ignore[abstract]  # only Retrieve is exercised
    gate = Gate(Limits(max_document_bytes=10), "default", None, {QUERIES: admission})
    server = grpc.aio.server(interceptors=[GrpcGate(gate)])
    query_pb2_grpc.add_QueryServiceServicer_to_server(recorder, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield query_pb2_grpc.QueryServiceStub(channel), recorder
    finally:
        await server.stop(0)


async def test_handlers_see_the_time_left_before_the_deadline(
    stub: tuple[query_pb2_grpc.QueryServiceAsyncStub, Recorder],
) -> None:
    client, _ = stub
    with_deadline = await client.Retrieve(query_pb2.RetrieveRequest(query="q"), timeout=5)
    # gRPC carries the deadline as a timeout, so the server's view may exceed 5 s by a hair.
    assert 4.0 < float(with_deadline.notes[0]) <= 5.1
    without = await client.Retrieve(query_pb2.RetrieveRequest(query="q"))
    assert without.notes == ["none"]


async def test_invalid_requests_never_reach_the_handler(
    stub: tuple[query_pb2_grpc.QueryServiceAsyncStub, Recorder],
) -> None:
    client, recorder = stub
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.Retrieve(query_pb2.RetrieveRequest(query=""))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert recorder.calls == 0


async def test_a_busy_family_refuses_without_calling_the_handler(
    stub: tuple[query_pb2_grpc.QueryServiceAsyncStub, Recorder],
) -> None:
    client, recorder = stub
    slow = asyncio.ensure_future(client.Retrieve(query_pb2.RetrieveRequest(query="slow")))
    await asyncio.sleep(0.1)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.Retrieve(query_pb2.RetrieveRequest(query="q"))
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    await slow
    assert recorder.calls == 1


async def test_one_workspace_flooding_the_queue_does_not_starve_another() -> None:
    async with serving(Admission(QUERIES, 1, 10)) as (client, recorder):
        slow = [query_pb2.RetrieveRequest(workspace="flood", query="slow") for _ in range(4)]
        flood = [asyncio.ensure_future(client.Retrieve(r)) for r in slow]
        await asyncio.sleep(0.2)  # one runs, three wait
        quiet = await client.Retrieve(query_pb2.RetrieveRequest(workspace="quiet", query="q"))
        await asyncio.gather(*flood)
    assert quiet.notes == ["none"]
    assert recorder.workspaces == ["flood", "flood", "quiet", "flood", "flood"]


class Announced(query_pb2_grpc.QueryServiceServicer):
    """Answers Retrieve with whether its embedding request is announced as near."""

    def __init__(self, forecast: Forecast) -> None:
        self.forecast = forecast

    async def Retrieve(
        self, request: query_pb2.RetrieveRequest, context: Any
    ) -> query_pb2.RetrieveResponse:
        return query_pb2.RetrieveResponse(notes=[str(self.forecast.any_near(Priority.QUERY))])


async def test_a_query_that_will_embed_is_announced_to_the_embedding_scheduler() -> None:
    forecast = Forecast(lambda: None)
    gate = Gate(Limits(max_document_bytes=10), "default", None, {}, forecast)
    server = grpc.aio.server(interceptors=[GrpcGate(gate)])
    query_pb2_grpc.add_QueryServiceServicer_to_server(Announced(forecast), server)  # type: ignore[abstract]
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = query_pb2_grpc.QueryServiceStub(channel)
            mix = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_MIX)
            bypass = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_BYPASS)
            default = await client.Retrieve(query_pb2.RetrieveRequest(query="q"))
            mixed = await client.Retrieve(query_pb2.RetrieveRequest(query="q", params=mix))
            bypassed = await client.Retrieve(query_pb2.RetrieveRequest(query="q", params=bypass))
    finally:
        await server.stop(0)
    assert [default.notes, mixed.notes, bypassed.notes] == [["True"], ["True"], ["False"]]
    assert not forecast.any_near(Priority.INDEXING)  # every announcement ended with its call
    assert embeds(query_pb2.QueryRequest(query="q"))
    assert not embeds(graph_pb2.GetGraphStatsRequest())
