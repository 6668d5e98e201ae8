"""`ragstream serve` end to end: events in through IngestService, answers out over gRPC."""

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc
from tests.e2e.conftest import WORKSPACE

pytestmark = pytest.mark.e2e
RECALL_QUESTION = "Which company made the seals behind the Tern S3 recall?"


def test_every_document_is_processed_with_chunks(indexed: list[common_pb2.DocumentStatus]) -> None:
    assert len(indexed) >= 15
    assert all(s.chunk_count >= 1 and s.version > 0 for s in indexed)


def test_health_and_reflection(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "ragstream.v1.QueryService", "ragstream.v1.IngestService"):
        reply = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    replies = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = {s.name for reply in replies for s in reply.list_services_response.service}
    assert {
        "ragstream.v1.QueryService",
        "ragstream.v1.IngestService",
        "grpc.health.v1.Health",
    } <= names


def test_retrieve_finds_the_recall_documents(channel: grpc.Channel, indexed: object) -> None:
    stub = query_pb2_grpc.QueryServiceStub(channel)
    response = stub.Retrieve(
        query_pb2.RetrieveRequest(
            workspace=WORKSPACE,
            query=RECALL_QUESTION,
            params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE, chunk_top_k=5),
        )
    )
    docs = [chunk.doc_id for chunk in response.context.chunks]
    assert len(docs) == 5
    assert {"2024-tern-s3-recall-notice.txt", "2024-tern-s3-root-cause-analysis.md"} & set(docs[:3])
    refs = {r.reference_id: r.doc_id for r in response.references}
    assert all(refs[c.reference_id] == c.doc_id for c in response.context.chunks)
    assert response.providers.embedding.startswith("hash:")
    assert {t.stage for t in response.timings} >= {"embed", "search_chunks"}


def test_query_answers_extractively_with_citations(channel: grpc.Channel, indexed: object) -> None:
    stub = query_pb2_grpc.QueryServiceStub(channel)
    response = stub.Query(query_pb2.QueryRequest(workspace=WORKSPACE, query=RECALL_QUESTION))
    assert response.answer.startswith("Extractive answer")
    assert "seal" in response.answer.lower()
    cited = {r.doc_id for r in response.references if f"[{r.reference_id}]" in response.answer}
    assert cited & {
        "2024-kestrel-polymers-acquisition.md",
        "2024-tern-s3-recall-notice.txt",
        "2024-tern-s3-root-cause-analysis.md",
    }
    assert response.providers.llm.startswith("extractive")


def test_stream_query_sends_context_then_text_then_end(
    channel: grpc.Channel, indexed: object
) -> None:
    stub = query_pb2_grpc.QueryServiceStub(channel)
    events = list(
        stub.StreamQuery(query_pb2.StreamQueryRequest(workspace=WORKSPACE, query=RECALL_QUESTION))
    )
    kinds = [event.WhichOneof("event") for event in events]
    assert kinds[0] == "context" and kinds[-1] == "end"
    assert set(kinds[1:-1]) == {"delta"}
    assert "Kestrel" in "".join(event.delta for event in events)


def test_workspaces_are_isolated(channel: grpc.Channel, indexed: object) -> None:
    stub = query_pb2_grpc.QueryServiceStub(channel)
    response = stub.Retrieve(
        query_pb2.RetrieveRequest(workspace="elsewhere", query=RECALL_QUESTION)
    )
    assert len(response.context.chunks) == 0


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (query_pb2.QueryRequest(workspace=WORKSPACE, query=""), "query"),
        (query_pb2.QueryRequest(workspace="bad workspace!", query="x"), "workspace"),
        (query_pb2.QueryRequest(query="x", params=query_pb2.QueryParams(top_k=-1)), "params.top_k"),
        (
            query_pb2.QueryRequest(
                query="x",
                params=query_pb2.QueryParams(mode=99),  # type: ignore[arg-type]
            ),
            "params.mode",
        ),
    ],
)
def test_invalid_requests_name_the_field(
    channel: grpc.Channel, request_: query_pb2.QueryRequest, field: str
) -> None:
    stub = query_pb2_grpc.QueryServiceStub(channel)
    with pytest.raises(grpc.RpcError) as caught:
        stub.Query(request_)
    error = caught.value
    assert isinstance(error, grpc.Call)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = rpc_status.from_call(error)
    assert status is not None
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert bad_request.field_violations[0].field == field


def test_list_documents_pages_through_everything(
    channel: grpc.Channel, indexed: list[common_pb2.DocumentStatus]
) -> None:
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    seen: list[str] = []
    token = ""
    while True:
        page = stub.ListDocuments(
            ingest_pb2.ListDocumentsRequest(workspace=WORKSPACE, page_size=7, page_token=token)
        )
        assert len(page.documents) <= 7
        seen.extend(d.doc_id for d in page.documents)
        token = page.next_page_token
        if not token:
            break
    assert sorted(seen) == sorted(s.doc_id for s in indexed)


def test_indexing_progress_reaches_zero(channel: grpc.Channel, indexed: object) -> None:
    import time

    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    deadline = time.monotonic() + 60
    while True:
        progress = stub.GetIndexingProgress(ingest_pb2.GetIndexingProgressRequest())
        if (progress.pending_document_events, progress.pending_graph_merges) == (0, 0):
            break
        assert time.monotonic() < deadline, progress
        time.sleep(0.2)
    entities = (
        query_pb2_grpc.QueryServiceStub(channel)
        .Retrieve(
            query_pb2.RetrieveRequest(
                workspace=WORKSPACE,
                query="Kestrel Polymers",
                params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_LOCAL),
            )
        )
        .context.entities
    )
    assert "Kestrel Polymers" in {e.name for e in entities}
