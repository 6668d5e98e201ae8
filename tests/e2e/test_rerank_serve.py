"""Reranking in a running server, through the rerank test server (Jina/Cohere format)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from ragstream.testing.rerank_server import RerankTestServer
from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.e2e.conftest import DEMO_CORPUS, publish_and_wait
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
QUESTION = "Which company made the seals behind the Tern S3 recall?"


@pytest.fixture
async def reranker() -> AsyncIterator[RerankTestServer]:
    async with RerankTestServer() as server:
        yield server


@pytest.fixture
def serve(tmp_path: Path, reranker: RerankTestServer) -> Iterator[ServeProcess]:
    env = {
        "RAGSTREAM_RERANK__PROVIDER": "jina",
        "RAGSTREAM_RERANK__MODEL": "test-reranker",
        "RAGSTREAM_RERANK__BASE_URL": reranker.url("jina"),
    }
    with ServeProcess(tmp_path / "data", env) as process:
        yield process


def retrieve_both(address: str) -> tuple[query_pb2.RetrieveResponse, query_pb2.RetrieveResponse]:
    """Blocking client calls: run in a thread, the rerank server lives on the test's loop."""
    with grpc.insecure_channel(address) as channel:
        publish_and_wait(channel, "rr", DEMO_CORPUS)
        stub = query_pb2_grpc.QueryServiceStub(channel)
        request = query_pb2.RetrieveRequest(
            workspace="rr",
            query=QUESTION,
            params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE, chunk_top_k=5),
        )
        reranked = stub.Retrieve(request)
        request.params.enable_rerank = False
        plain = stub.Retrieve(request)
    return reranked, plain


async def test_retrieve_reranks_with_the_configured_reranker(
    serve: ServeProcess, reranker: RerankTestServer
) -> None:
    reranked, plain = await asyncio.to_thread(retrieve_both, serve.address)
    assert reranker.log.total > 0
    assert reranked.providers.reranker.startswith("jina")
    assert not any(n.startswith("rerank") for n in reranked.notes), list(reranked.notes)
    assert {t.stage for t in reranked.timings} >= {"rerank"}
    scores = [c.score for c in reranked.context.chunks]
    assert scores == sorted(scores, reverse=True) and len(scores) == 5
    assert "rerank" not in {t.stage for t in plain.timings}
    assert [c.chunk_id for c in reranked.context.chunks] != [
        c.chunk_id for c in plain.context.chunks
    ]
