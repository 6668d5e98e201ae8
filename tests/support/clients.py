"""What the Python client gets for one question, in the JSON shape that the clients in other
languages (tests/e2e/node_client, examples/go) print, so a test can compare them whole."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from typing import Any

import grpc

from ragstream.v1 import query_pb2, query_pb2_grpc

PARAMS = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE, chunk_top_k=5)
"""The parameters every such client sends."""


def run_client(command: Sequence[str], timeout_s: float = 120) -> subprocess.CompletedProcess[str]:
    """Runs a client to its end, its output captured as text."""
    return subprocess.run(
        list(command), capture_output=True, text=True, timeout=timeout_s, check=False
    )


def chunks(context: query_pb2.Context) -> list[dict[str, str]]:
    return [{"chunk_id": c.chunk_id, "doc_id": c.doc_id} for c in context.chunks]


def python_results(channel: grpc.Channel, workspace: str, question: str) -> dict[str, Any]:
    """Retrieve, Query and StreamQuery with PARAMS; a stream's `events` are the kinds of its
    messages in order, repeats collapsed."""
    stub = query_pb2_grpc.QueryServiceStub(channel)
    fields: dict[str, Any] = {"workspace": workspace, "query": question, "params": PARAMS}
    retrieved = stub.Retrieve(query_pb2.RetrieveRequest(**fields))
    answered = stub.Query(query_pb2.QueryRequest(**fields))
    stream = list(stub.StreamQuery(query_pb2.StreamQueryRequest(**fields)))
    kinds = [str(message.WhichOneof("event")) for message in stream]
    return {
        "retrieve": {
            "chunks": chunks(retrieved.context),
            "mode": query_pb2.QueryMode.Name(retrieved.mode),
        },
        "query": {"chunks": chunks(answered.context), "answer": answered.answer},
        "stream": {
            "chunks": chunks(stream[0].context.context),
            "answer": "".join(message.delta for message in stream),
            "events": [kind for i, kind in enumerate(kinds) if i == 0 or kinds[i - 1] != kind],
        },
    }
