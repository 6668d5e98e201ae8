"""`ragstream query` where there is nothing to search: bypass without an LLM says that it
has no answerer (it never searches), and a workspace with no documents says it is empty,
in the answer and in the response's notes."""

from __future__ import annotations

import grpc
import pytest

from ragstream.query.stages.answer import NO_CONTEXT_ANSWER
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
