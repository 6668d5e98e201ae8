"""StreamQuery with a real (local) OpenAI-compatible LLM: tokens flow as they are made,
and a client that goes away stops the upstream request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
ANSWER = " ".join(f"word{i}" for i in range(30))


def answer_slowly(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    return ANSWER


@pytest.fixture
async def llm() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(responder=answer_slowly) as server:
        server.set_token_delay(0.15)  # about 4.5 s for the whole answer
        yield server


@pytest.fixture
def serve(tmp_path: Path, llm: OpenAITestServer) -> Iterator[ServeProcess]:
    env = {
        "RAGSTREAM_LLM__PROVIDER": "openai",
        "RAGSTREAM_LLM__MODEL": "slow-model",
        "RAGSTREAM_LLM__BASE_URL": llm.base_url,
        "RAGSTREAM_LLM__API_KEY": "sk-test-not-a-secret",
    }
    with ServeProcess(tmp_path / "data", env) as process:
        yield process


async def _request(address: str) -> tuple[grpc.aio.Channel, Any]:
    """Indexes one document (its extraction calls the LLM too), then starts a stream."""
    channel = grpc.aio.insecure_channel(address)
    ingest = ingest_pb2_grpc.IngestServiceStub(channel)
    await ingest.PublishDocuments(
        ingest_pb2.PublishDocumentsRequest(
            workspace="stream",
            documents=[ingest_pb2.DocumentInput(doc_id="d", content="Tern S3 was recalled.")],
        )
    )
    async with asyncio.timeout(60):
        while True:
            progress = await ingest.GetIndexingProgress(ingest_pb2.GetIndexingProgressRequest())
            if (progress.pending_document_events, progress.pending_graph_merges) == (0, 0):
                break
            await asyncio.sleep(0.2)
    call = query_pb2_grpc.QueryServiceStub(channel).StreamQuery(
        query_pb2.StreamQueryRequest(
            workspace="stream",
            query="What happened to the Tern S3?",
            params=query_pb2.QueryParams(
                mode=query_pb2.QUERY_MODE_NAIVE, hl_keywords=["recall"], ll_keywords=["Tern S3"]
            ),
        )
    )
    return channel, call


async def test_first_token_arrives_before_the_llm_finishes(
    serve: ServeProcess, llm: OpenAITestServer
) -> None:
    channel, call = await _request(serve.address)
    indexing_calls = llm.log.completed["chat"]
    started = time.monotonic()
    kinds: list[str] = []
    first_delta_at = None
    async for event in call:
        kind = event.WhichOneof("event")
        kinds.append(kind)
        if kind == "delta" and first_delta_at is None:
            first_delta_at = time.monotonic() - started
            assert llm.log.completed["chat"] == indexing_calls, "the LLM had already finished"
    await channel.close(grace=None)
    assert kinds[0] == "context" and kinds[-1] == "end"
    assert kinds.count("delta") > 3
    assert first_delta_at is not None
    assert llm.log.completed["chat"] == indexing_calls + 1


async def test_cancelling_the_call_cancels_the_upstream_request(
    serve: ServeProcess, llm: OpenAITestServer
) -> None:
    channel, call = await _request(serve.address)
    indexing_calls = llm.log.completed["chat"]
    async for event in call:
        if event.WhichOneof("event") == "delta":
            break
    call.cancel()
    async with asyncio.timeout(10):
        await llm.log.wait_for(lambda log: log.cancelled["chat"] >= 1)
    assert llm.log.completed["chat"] == indexing_calls
    await channel.close(grace=None)


async def test_cancelled_streams_leave_no_error_in_the_log(
    serve: ServeProcess, llm: OpenAITestServer
) -> None:
    channel, first = await _request(serve.address)
    first.cancel()
    stub = query_pb2_grpc.QueryServiceStub(channel)
    request = query_pb2.StreamQueryRequest(
        workspace="stream",
        query="What happened to the Tern S3?",
        params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE, ll_keywords=["Tern S3"]),
    )
    codes: list[grpc.StatusCode | None] = []
    for n in range(20):
        if n % 2 == 0:  # cancelled by the client after the first message
            call = stub.StreamQuery(request)
            await call.read()
            call.cancel()
            codes.append(grpc.StatusCode.CANCELLED)
            continue
        codes.append(await _cut_off_by_deadline(stub, request, 0.3 + 0.05 * n))
    assert codes.count(grpc.StatusCode.DEADLINE_EXCEEDED) == 10, codes
    async with asyncio.timeout(10):  # every upstream request was given up
        await llm.log.wait_for(lambda log: log.in_flight["chat"] == 0)
    await asyncio.sleep(1.0)  # anything logged late, by a collector, would be in by now
    await channel.close(grace=None)
    text = serve.log_path.read_text(errors="replace")
    assert llm.log.cancelled["chat"] >= 10
    assert [line for line in text.splitlines() if "ERROR" in line or "Traceback" in line] == []


async def _cut_off_by_deadline(
    stub: Any, request: query_pb2.StreamQueryRequest, timeout: float
) -> grpc.StatusCode | None:
    """The status of a stream cut off by its deadline mid-answer. A call that arrives while
    the one before is still giving up its upstream request may be refused as overloaded
    (its deadline is shorter than a call takes): it retries a little later, as a client
    would."""
    for _ in range(5):
        try:
            async for _event in stub.StreamQuery(request, timeout=timeout):
                pass
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                return error.code()
            await asyncio.sleep(0.5)
        else:
            return None
    return grpc.StatusCode.RESOURCE_EXHAUSTED
