"""Traces of the HTTP/JSON port and of GraphService on a real `ragstream serve`, exported over
OTLP/gRPC to a local receiver: each HTTP call is a SERVER span continuing the request's
`traceparent`, with the HTTP conventions' attributes and the stage spans beneath it, as a
gRPC call is; a GraphService call is an RPC span with its hybrid search beneath."""

from __future__ import annotations

import json
import secrets
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from ragstream.testing.otlp_receiver import OTLPReceiver, ReceivedSpan
from ragstream.v1 import graph_pb2, graph_pb2_grpc
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
WORKSPACE = "traced-http"
SERVER = 2
DOCUMENT = "Kestrel Polymers made the seals of the Tern S3. The Tern S3 was recalled in 2024."
QUERY_STAGES = {"keywords", "embed", "search_entities", "search_chunks", "budget", "answer"}


def traceparent() -> tuple[str, str, dict[str, str]]:
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, {"traceparent": f"00-{trace_id}-{span_id}-01"}


def post(server: ServeProcess, path: str, body: Any, headers: dict[str, str]) -> Any:
    data = json.dumps(body).encode()
    headers = {**headers, "content-type": "application/json"}
    request = urllib.request.Request(f"http://{server.http_address}{path}", data, headers)
    with urllib.request.urlopen(request, timeout=60) as reply:
        return json.loads(reply.read())


def in_trace(receiver: OTLPReceiver, trace_id: str) -> list[ReceivedSpan]:
    return [s for s in receiver.spans() if s.trace_id == trace_id]


def named(spans: list[ReceivedSpan], name: str) -> ReceivedSpan:
    [found] = [s for s in spans if s.name == name]
    return found


@pytest.fixture(scope="module")
def receiver() -> Iterator[OTLPReceiver]:
    with OTLPReceiver() as running:
        yield running


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, receiver: OTLPReceiver
) -> Iterator[ServeProcess]:
    env = {
        "OTEL_TRACES_EXPORTER": "otlp",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
    }
    data = tmp_path_factory.mktemp("traced-http") / "data"
    with ServeProcess(data, env, http=True) as process:
        document = {"docId": "tern.md", "content": DOCUMENT}
        post(process, "/v1/documents", {"workspace": WORKSPACE, "documents": [document]}, {})
        wait_current(process)
        yield process


def wait_current(process: ServeProcess) -> None:
    """Until the document and its graph merges are indexed: the graph test searches entities,
    which stage 2 writes after the document's own status says processed."""
    deadline = time.monotonic() + 60
    progress = f"http://{process.http_address}/v1/indexing-progress?workspace={WORKSPACE}"
    while time.monotonic() < deadline:
        with urllib.request.urlopen(progress, timeout=10) as reply:
            queued = json.loads(reply.read())
        # Zero counts are left out of the JSON, as proto3 JSON does.
        if not int(queued.get("pendingDocumentEvents", 0)) + int(
            queued.get("pendingGraphMerges", 0)
        ):
            return
        time.sleep(0.2)
    raise AssertionError(f"the index was not current within 60 s: {queued}")


def test_an_http_query_is_a_server_span_over_the_stages(
    receiver: OTLPReceiver, server: ServeProcess
) -> None:
    trace_id, parent, headers = traceparent()
    body = {"workspace": WORKSPACE, "query": "Who made the seals of the Tern S3?"}
    assert post(server, "/v1/query", body, headers)["answer"]
    receiver.wait_for(
        lambda r: {"POST /v1/query"} | QUERY_STAGES <= {s.name for s in in_trace(r, trace_id)}
    )
    spans = in_trace(receiver, trace_id)
    http = named(spans, "POST /v1/query")
    assert (http.parent_span_id, http.kind) == (parent, SERVER)
    attributes = {key: http.attributes[key] for key in ("http.request.method", "http.route")}
    assert attributes == {"http.request.method": "POST", "http.route": "/v1/query"}
    assert http.attributes["http.response.status_code"] == 200
    assert http.attributes["rpc.service"] == "ragstream.v1.QueryService"
    assert http.attributes["rpc.method"] == "Query"
    assert {s.name for s in spans if s.parent_span_id == http.span_id} >= QUERY_STAGES


def test_a_graph_call_is_an_rpc_span_over_its_search(
    receiver: OTLPReceiver, server: ServeProcess
) -> None:
    trace_id, parent, headers = traceparent()
    request = graph_pb2.SearchEntitiesRequest(workspace=WORKSPACE, query="Kestrel")
    with grpc.insecure_channel(server.address) as channel:
        stub = graph_pb2_grpc.GraphServiceStub(channel)
        found = stub.SearchEntities(request, metadata=tuple(headers.items()))
    assert "Kestrel Polymers" in {hit.entity.name for hit in found.hits}
    name = "ragstream.v1.GraphService/SearchEntities"
    receiver.wait_for(lambda r: {name, "hybrid_search"} <= {s.name for s in in_trace(r, trace_id)})
    spans = in_trace(receiver, trace_id)
    rpc = named(spans, name)
    assert rpc.parent_span_id == parent and rpc.attributes["ragstream.workspace"] == WORKSPACE
    assert "hybrid_search" in {s.name for s in spans if s.parent_span_id == rpc.span_id}
