"""Deadlines, overload and shutdown of `ragstream serve` against the OpenAI-compatible test
server: a call past its deadline cancels the LLM request, a full queue and a call that could
not finish before its deadline are refused at once with a retry hint, and SIGTERM flips health
before draining the calls in flight."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from pathlib import Path
from typing import cast

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from ragstream.testing.openai_server import OpenAITestServer, RequestLog
from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.support.server import ServeProcess, openai_embedding_env

pytestmark = pytest.mark.e2e
NAIVE = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE)
QUERY = query_pb2.QueryRequest(workspace="d", query="What happened to the drone?", params=NAIVE)
WARM_UP = query_pb2.RetrieveRequest(workspace="d", query="warm up", params=NAIVE)


def llm_env(llm: OpenAITestServer) -> dict[str, str]:
    return {
        "RAGSTREAM_LLM__PROVIDER": "openai",
        "RAGSTREAM_LLM__MODEL": "test-chat",
        "RAGSTREAM_LLM__BASE_URL": llm.base_url,
        "RAGSTREAM_LLM__API_KEY": "test-key",
        "RAGSTREAM_LLM__MAX_RETRIES": "0",
        **openai_embedding_env(llm.base_url),
    }


async def serve(tmp_path: Path, env: Mapping[str, str]) -> ServeProcess:
    return await asyncio.to_thread(ServeProcess(tmp_path / "data", env).start)


@pytest.fixture
async def llm() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer() as server:
        yield server


@pytest.fixture
async def server(tmp_path: Path, llm: OpenAITestServer) -> AsyncIterator[ServeProcess]:
    process = await serve(tmp_path, llm_env(llm))
    try:
        yield process
    finally:
        await asyncio.to_thread(process.stop)


def cancelled(count: int) -> Callable[[RequestLog], bool]:
    return lambda log: log.cancelled["chat"] >= count


async def expect_deadline(call: AsyncIterator[object] | object, started: float) -> float:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        if isinstance(call, grpc.aio.UnaryStreamCall):
            async for _ in call:
                pass
        else:
            await call  # type: ignore[misc]
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    return time.monotonic() - started


async def test_a_deadline_cancels_the_llm_request(
    server: ServeProcess, llm: OpenAITestServer
) -> None:
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        await stub.Retrieve(WARM_UP)
        llm.set_latency("chat", 5.0)
        # The deadline leaves retrieval time to reach the LLM even on a loaded machine (at
        # 0.2 s a slow retrieval could run out first, and no LLM request would be made).
        deadline = 1.0
        for round_, call in enumerate(("Query", "StreamQuery"), start=1):
            started = time.monotonic()
            if call == "Query":
                elapsed = await expect_deadline(stub.Query(QUERY, timeout=deadline), started)
            else:
                request = query_pb2.StreamQueryRequest(
                    workspace="d", query=QUERY.query, params=NAIVE
                )
                stream = stub.StreamQuery(request, timeout=deadline)
                elapsed = await expect_deadline(stream, started)
            assert elapsed < deadline + 0.3, f"{call} answered after {elapsed:.3f} s"
            assert len(llm.log.bodies.get("chat", [])) == round_, "the LLM request was not made"
            async with asyncio.timeout(3):  # the server gave the LLM request up
                await llm.log.wait_for(cancelled(round_))
            assert llm.log.completed["chat"] == 0
        llm.set_latency("chat", 0.0)
        answer = await stub.Query(QUERY, timeout=30)
        assert answer.answer.startswith("echo:")


async def test_a_full_queue_refuses_at_once_with_a_retry_hint(
    tmp_path: Path, llm: OpenAITestServer
) -> None:
    env = {
        **llm_env(llm),
        "RAGSTREAM_SERVER__MAX_CONCURRENT_QUERIES": "2",
        "RAGSTREAM_SERVER__MAX_QUEUED_QUERIES": "2",
    }
    process = await serve(tmp_path, env)
    llm.set_latency("chat", 2.0)  # refusals are told from waits on a loaded machine too
    try:
        async with grpc.aio.insecure_channel(process.address) as channel:
            stub = query_pb2_grpc.QueryServiceStub(channel)
            await stub.Retrieve(WARM_UP)
            outcomes = await asyncio.gather(*(timed(stub) for _ in range(8)))
    finally:
        await asyncio.to_thread(process.stop)
    ok = [seconds for code, seconds, _ in outcomes if code == grpc.StatusCode.OK]
    refused = [
        (s, hint) for code, s, hint in outcomes if code == grpc.StatusCode.RESOURCE_EXHAUSTED
    ]
    assert (len(ok), len(refused)) == (4, 4), outcomes  # 2 working and 2 more at most
    # Refused at once: well before the first answer, which takes the LLM's 2 s.
    assert all(seconds < 1.0 and hint > 0 for seconds, hint in refused), refused
    # Waiting on the LLM holds no slot: all four waited together (in turn: over 4 s).
    assert max(ok) < 3.5, ok


async def timed(
    stub: query_pb2_grpc.QueryServiceAsyncStub, timeout: float = 20
) -> tuple[grpc.StatusCode, float, float]:
    """(status, seconds, RetryInfo delay in seconds or 0) of one Query."""
    started = time.monotonic()
    try:
        await stub.Query(QUERY, timeout=timeout)
    except grpc.aio.AioRpcError as error:
        hint = 0.0
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
        if status is not None and status.details:
            retry = error_details_pb2.RetryInfo()
            assert status.details[0].Unpack(retry)
            hint = retry.retry_delay.ToMilliseconds() / 1000
            # grpc.aio yields (key, value) tuples; the stubs declare another shape.
            pushback = dict(cast(Iterable[tuple[str, str]], error.trailing_metadata() or ()))
            assert int(pushback["grpc-retry-pushback-ms"]) == retry.retry_delay.ToMilliseconds()
        return error.code(), time.monotonic() - started, hint
    return grpc.StatusCode.OK, time.monotonic() - started, 0.0


async def test_a_call_that_cannot_finish_in_time_is_refused_at_once(
    tmp_path: Path, llm: OpenAITestServer
) -> None:
    env = {
        **llm_env(llm),
        "RAGSTREAM_SERVER__MAX_CONCURRENT_QUERIES": "1",
        "RAGSTREAM_SERVER__MAX_QUEUED_QUERIES": "4",
    }
    process = await serve(tmp_path, env)
    llm.set_latency("chat", 1.0)
    try:
        async with grpc.aio.insecure_channel(process.address) as channel:
            stub = query_pb2_grpc.QueryServiceStub(channel)
            await stub.Query(QUERY, timeout=20)  # the server learns a query takes 1 s
            first = asyncio.ensure_future(stub.Query(QUERY, timeout=20))
            await llm.log.wait_for(lambda log: log.received["chat"] == 2)
            started = time.monotonic()
            hurried = await timed(stub, timeout=0.5)  # 1 s of wait, 1 s of work: no chance
            patient = await timed(stub, timeout=20)  # queued, not refused
            assert (await first).answer.startswith("echo:")
    finally:
        await asyncio.to_thread(process.stop)
    code, seconds, hint = hurried
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and seconds < 0.3 and hint > 0.3
    assert time.monotonic() - started > 1.0 and patient[0] == grpc.StatusCode.OK
    assert llm.log.received["chat"] == 3  # the refused call never reached the LLM


async def test_sigterm_flips_health_then_drains_calls_in_flight(
    server: ServeProcess, llm: OpenAITestServer
) -> None:
    llm.set_latency("chat", 1.5)
    assert server.process is not None
    async with grpc.aio.insecure_channel(server.address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
        first = await watch.read()
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        in_flight = asyncio.ensure_future(stub.Query(QUERY, timeout=30))
        await llm.log.wait_for(lambda log: log.received["chat"] >= 1)
        server.process.send_signal(signal.SIGTERM)
        flipped = await asyncio.wait_for(watch.read(), timeout=5)
        assert flipped.status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert not in_flight.done()  # health flipped before the call finished
        watch.cancel()  # a watcher would otherwise hold the drain open until the grace ends
        response = await in_flight
        assert response.answer.startswith("echo:")
    code = await asyncio.to_thread(server.process.wait, 30)
    assert code == 0
    assert llm.log.completed["chat"] == 1 and llm.log.cancelled["chat"] == 0
