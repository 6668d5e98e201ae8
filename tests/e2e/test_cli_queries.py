"""`ragstream query` where there is nothing to search: bypass without an LLM says that it
has no answerer (it never searches), and a workspace with no documents says it is empty in
the response's notes, and in the answer when there is no LLM to ask."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from ragstream.query.stages.answer import NO_CONTEXT_ANSWER
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.support.server import ServeProcess, ragstream_cli

pytestmark = pytest.mark.e2e
EMPTY_NOTE = "workspace 'nothing-here' holds no indexed documents"


def test_bypass_without_an_llm_says_so_rather_than_nothing_found(server: ServeProcess) -> None:
    result = ragstream_cli(server, "query", "Who founded Halvorsen Aquatics?", "--mode", "bypass")
    assert result.returncode == 0, result.stderr
    assert "Bypass mode sends the question straight to the LLM" in result.stdout
    assert "no LLM is configured" in result.stdout
    assert NO_CONTEXT_ANSWER not in result.stdout


def test_a_query_on_an_empty_workspace_says_it_is_empty(server: ServeProcess) -> None:
    result = ragstream_cli(server, "query", "Who leads engineering?", "-w", "nothing-here")
    assert result.returncode == 0, result.stderr
    assert "The workspace 'nothing-here' holds no indexed documents" in result.stdout
    assert f"note: {EMPTY_NOTE}" in result.stdout
    context = ragstream_cli(server, "query", "engineering", "--context-only", "-w", "nothing-here")
    assert f"note: {EMPTY_NOTE}" in context.stdout
    with grpc.insecure_channel(server.address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        empty = stub.Query(query_pb2.QueryRequest(workspace="nothing-here", query="engineering"))
        assert any(EMPTY_NOTE in note for note in empty.notes)
        assert empty.answer.startswith("The workspace 'nothing-here' holds no indexed documents")


def test_a_workspace_with_documents_gets_no_empty_note(
    server: ServeProcess, indexed: object
) -> None:
    with grpc.insecure_channel(server.address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        reply = stub.Query(query_pb2.QueryRequest(workspace="e2e", query="Who leads engineering?"))
    assert not any("holds no indexed documents" in note for note in reply.notes)


async def test_with_an_llm_an_empty_workspace_is_noted_and_the_llm_still_asked(
    tmp_path: Path,
) -> None:
    env = {
        "RAGSTREAM_LLM__PROVIDER": "openai",
        "RAGSTREAM_LLM__MODEL": "test-chat",
        "RAGSTREAM_LLM__API_KEY": "test-key",
    }
    async with OpenAITestServer() as llm:
        env["RAGSTREAM_LLM__BASE_URL"] = llm.base_url
        process = await asyncio.to_thread(ServeProcess(tmp_path / "data", env).start)
        try:
            async with grpc.aio.insecure_channel(process.address) as channel:
                stub = query_pb2_grpc.QueryServiceStub(channel)
                request = query_pb2.QueryRequest(
                    workspace="nothing-here",
                    query="And who leads it?",
                    params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE),
                )
                reply = await stub.Query(request)
        finally:
            await asyncio.to_thread(process.stop)
    assert any(EMPTY_NOTE in note for note in reply.notes)
    assert reply.answer.startswith("echo:")  # the LLM answered (it may know the history)
