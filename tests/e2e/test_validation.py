"""Malformed requests against a running `ragstream serve`: one per rule, each refused with
INVALID_ARGUMENT naming the field, and the server stays healthy throughout."""

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status

from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc
from tests.support.raw import UNDECODABLE, raw_error
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
MAX_DOCUMENT_BYTES = 4096
P = query_pb2.QueryParams
F = common_pb2.SearchFilter
D = ingest_pb2.DocumentInput
M = query_pb2.ChatMessage


def q(query: str = "what changed?", **fields: Any) -> query_pb2.QueryRequest:
    return query_pb2.QueryRequest(query=query, **fields)


def ts(seconds: int = 0, nanos: int = 0) -> Timestamp:
    return Timestamp(seconds=seconds, nanos=nanos)


def p(**params: Any) -> query_pb2.QueryRequest:
    return q(params=P(**params))


stream = query_pb2.StreamQueryRequest
retrieve = query_pb2.RetrieveRequest
delete = ingest_pb2.DeleteDocumentsRequest
status = ingest_pb2.GetDocumentStatusRequest
listing = ingest_pb2.ListDocumentsRequest


def publish(*docs: ingest_pb2.DocumentInput, **fields: Any) -> ingest_pb2.PublishDocumentsRequest:
    return ingest_pb2.PublishDocumentsRequest(documents=docs, **fields)


ONE = D(doc_id="a.md", content="text")
CASES: list[tuple[str, Any, str]] = [
    ("workspace-characters", q(workspace="bad workspace!"), "workspace"),
    ("workspace-too-long", q(workspace="w" * 65), "workspace"),
    ("workspace-leading-dash", q(workspace="-w"), "workspace"),
    ("query-empty", q(""), "query"),
    ("query-blank", q("  \n\t"), "query"),
    ("query-too-long", q("x" * 8001), "query"),
    ("mode-unknown", p(mode=99), "params.mode"),
    ("top_k-negative", p(top_k=-1), "params.top_k"),
    ("top_k-too-large", p(top_k=1001), "params.top_k"),
    ("chunk_top_k-negative", p(chunk_top_k=-3), "params.chunk_top_k"),
    ("chunk_top_k-too-large", p(chunk_top_k=5000), "params.chunk_top_k"),
    ("entity-budget-negative", p(max_entity_tokens=-1), "params.max_entity_tokens"),
    ("entity-budget-huge", p(max_entity_tokens=10**7), "params.max_entity_tokens"),
    ("relation-budget-negative", p(max_relation_tokens=-9), "params.max_relation_tokens"),
    ("relation-budget-huge", p(max_relation_tokens=2**30), "params.max_relation_tokens"),
    ("total-budget-too-small", p(max_total_tokens=100), "params.max_total_tokens"),
    ("total-budget-huge", p(max_total_tokens=10**8), "params.max_total_tokens"),
    ("total-budget-negative", p(max_total_tokens=-1), "params.max_total_tokens"),
    ("related-chunks-negative", p(related_chunk_number=-1), "params.related_chunk_number"),
    ("related-chunks-too-many", p(related_chunk_number=101), "params.related_chunk_number"),
    ("pick-method-unknown", p(kg_chunk_pick_method=7), "params.kg_chunk_pick_method"),
    ("cosine-above-one", p(cosine_threshold=1.5), "params.cosine_threshold"),
    ("cosine-below-minus-one", p(cosine_threshold=-2), "params.cosine_threshold"),
    ("cosine-nan", p(cosine_threshold=float("nan")), "params.cosine_threshold"),
    ("rerank-floor-infinite", p(min_rerank_score=float("inf")), "params.min_rerank_score"),
    ("rerank-floor-nan", p(min_rerank_score=float("nan")), "params.min_rerank_score"),
    (
        "context-and-prompt",
        p(only_need_context=True, only_need_prompt=True),
        "params.only_need_prompt",
    ),
    ("response-type-too-long", p(response_type="x" * 101), "params.response_type"),
    ("response-type-control", p(response_type="Bullet\nPoints"), "params.response_type"),
    (
        "history-too-long",
        p(conversation_history=[M(role="user")] * 101),
        "params.conversation_history",
    ),
    (
        "history-role",
        p(conversation_history=[M(role="user"), M(role="robot")]),
        "params.conversation_history[1].role",
    ),
    (
        "history-content-too-long",
        p(conversation_history=[M(role="user", content="x" * 32001)]),
        "params.conversation_history[0].content",
    ),
    ("user-prompt-too-long", p(user_prompt="x" * 8001), "params.user_prompt"),
    ("hl-keywords-too-many", p(hl_keywords=["k"] * 65), "params.hl_keywords"),
    ("hl-keyword-blank", p(hl_keywords=["ok", " "]), "params.hl_keywords[1]"),
    ("ll-keyword-too-long", p(ll_keywords=["x" * 201]), "params.ll_keywords[0]"),
    ("filter-ids-too-many", q(filter=F(doc_ids=[f"d{i}" for i in range(1001)])), "filter.doc_ids"),
    ("filter-id-empty", q(filter=F(doc_ids=[""])), "filter.doc_ids[0]"),
    ("filter-id-too-long", q(filter=F(doc_ids=["ok", "x" * 513])), "filter.doc_ids[1]"),
    (
        "filter-metadata-too-many",
        q(filter=F(metadata={str(i): "v" for i in range(65)})),
        "filter.metadata",
    ),
    ("filter-metadata-empty-key", q(filter=F(metadata={"": "v"})), "filter.metadata"),
    ("filter-metadata-long-value", q(filter=F(metadata={"k": "v" * 1025})), "filter.metadata"),
    ("filter-time-nanos", q(filter=F(time_from=ts(0, 2_000_000_000))), "filter.time_from"),
    ("filter-time-year-10000", q(filter=F(time_to=ts(253_402_300_800))), "filter.time_to"),
    ("filter-time-order", q(filter=F(time_from=ts(20), time_to=ts(10))), "filter.time_from"),
    ("stream-query-empty", stream(query=""), "query"),
    ("stream-mode-unknown", stream(query="q", params=P(mode=42)), "params.mode"),  # type: ignore[arg-type]
    ("retrieve-workspace", retrieve(workspace="a/b", query="q"), "workspace"),
    ("retrieve-top_k", retrieve(query="q", params=P(top_k=-2)), "params.top_k"),
    ("publish-nothing", publish(), "documents"),
    ("publish-too-many", publish(*[D(doc_id=f"d{i}") for i in range(1001)]), "documents"),
    ("publish-workspace", publish(ONE, workspace="white space"), "workspace"),
    ("doc-id-empty", publish(D(content="x")), "documents[0].doc_id"),
    ("doc-id-too-long", publish(D(doc_id="x" * 513)), "documents[0].doc_id"),
    ("doc-id-control", publish(ONE, D(doc_id="a\nb")), "documents[1].doc_id"),
    ("doc-id-blank", publish(D(doc_id="   ", content="x")), "documents[0].doc_id"),
    ("doc-id-bidi", publish(D(doc_id="report\u202efdp.exe")), "documents[0].doc_id"),
    ("doc-id-zero-width", publish(D(doc_id="a\u200bb")), "documents[0].doc_id"),
    ("delete-id-blank", delete(doc_ids=["a", "\u3000"]), "doc_ids[1]"),
    ("delete-id-bidi", delete(doc_ids=["\u2067a\u2069"]), "doc_ids[0]"),
    ("filter-id-blank", q(filter=F(doc_ids=[" "])), "filter.doc_ids[0]"),
    ("doc-id-repeated", publish(ONE, ONE), "documents[1].doc_id"),
    (
        "content-too-large",
        publish(D(doc_id="a", content="x" * (MAX_DOCUMENT_BYTES + 1))),
        "documents[0].content",
    ),
    (
        "content-multibyte-too-large",
        publish(D(doc_id="a", content="é" * 2049)),
        "documents[0].content",
    ),
    ("file-path-too-long", publish(D(doc_id="a", file_path="p" * 4097)), "documents[0].file_path"),
    ("file-path-control", publish(D(doc_id="a", file_path="a\x00b")), "documents[0].file_path"),
    (
        "doc-metadata-long-key",
        publish(D(doc_id="a", metadata={"k" * 129: "v"})),
        "documents[0].metadata",
    ),
    (
        "doc-metadata-too-many",
        publish(D(doc_id="a", metadata={str(i): "" for i in range(65)})),
        "documents[0].metadata",
    ),
    ("version-negative", publish(D(doc_id="a", version=-5)), "documents[0].version"),
    ("doc-timestamp", publish(D(doc_id="a", timestamp=ts(0, -1))), "documents[0].timestamp"),
    ("delete-nothing", delete(), "doc_ids"),
    ("delete-id-empty", delete(doc_ids=["a", ""]), "doc_ids[1]"),
    ("delete-id-repeated", delete(doc_ids=["a", "a"]), "doc_ids[1]"),
    ("delete-workspace", delete(workspace="x" * 70, doc_ids=["a"]), "workspace"),
    ("status-too-many", status(doc_ids=["a"] * 1001), "doc_ids"),
    ("status-id-too-long", status(doc_ids=["y" * 600]), "doc_ids[0]"),
    ("status-workspace", status(workspace="é"), "workspace"),
    ("page-size-negative", listing(page_size=-1), "page_size"),
    ("page-size-too-large", listing(page_size=1001), "page_size"),
    ("state-unknown", listing(state=42), "state"),  # type: ignore[arg-type]
    ("page-token-garbage", listing(page_token="!!!"), "page_token"),
    ("page-token-truncated", listing(page_token="YWJ"), "page_token"),
    ("page-token-too-long", listing(page_token="QUFB" * 1100), "page_token"),
    ("list-workspace", listing(workspace="a.b"), "workspace"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    env = {
        "RAGSTREAM_INDEXER__MAX_DOCUMENT_BYTES": str(MAX_DOCUMENT_BYTES),
        "RAGSTREAM_SERVER__MAX_MESSAGE_MB": "1",
    }
    with ServeProcess(tmp_path_factory.mktemp("validation") / "data", env) as process:
        yield process


def call(channel: grpc.Channel, request: Any) -> object:
    method = type(request).__name__.removesuffix("Request")
    if method in ("Query", "Retrieve"):
        return getattr(query_pb2_grpc.QueryServiceStub(channel), method)(request, timeout=30)
    if method == "StreamQuery":
        stub = query_pb2_grpc.QueryServiceStub(channel)
        return list(stub.StreamQuery(request, timeout=30))
    return getattr(ingest_pb2_grpc.IngestServiceStub(channel), method)(request, timeout=30)


def test_the_table_covers_at_least_fifty_rules() -> None:
    assert len(CASES) >= 50
    assert len({name for name, *_ in CASES}) == len(CASES)


@pytest.mark.parametrize(("request_", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_request_is_refused_naming_the_field(
    channel: grpc.Channel, request_: Any, field: str
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        call(channel, request_)
    error = caught.value
    assert isinstance(error, grpc.Call)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    status = rpc_status.from_call(error)
    assert status is not None
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert [v.field for v in bad_request.field_violations] == [field]
    assert bad_request.field_violations[0].description
    assert field in (error.details() or "")


@pytest.mark.parametrize("body", UNDECODABLE.values(), ids=list(UNDECODABLE))
def test_undecodable_bytes_are_invalid_arguments(
    channel: grpc.Channel, server: ServeProcess, body: bytes
) -> None:
    for method, streaming in [
        ("/ragstream.v1.QueryService/Retrieve", False),
        ("/ragstream.v1.QueryService/StreamQuery", True),
        ("/ragstream.v1.IngestService/PublishDocuments", False),
    ]:
        error = raw_error(channel, method, body, streaming)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, method
        assert "undecodable request" in (error.details() or "")
    assert "ERROR" not in server.log() and "Traceback" not in server.log()


def test_server_stays_healthy_and_serves_valid_requests(channel: grpc.Channel) -> None:
    for _, request_, _ in CASES[:10]:
        with pytest.raises(grpc.RpcError):
            call(channel, request_)
    health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    published = call(channel, publish(ONE, workspace="valid"))
    assert isinstance(published, ingest_pb2.PublishDocumentsResponse)
    assert [r.doc_id for r in published.results] == ["a.md"]
    retrieved = call(channel, query_pb2.RetrieveRequest(workspace="valid", query="q"))
    assert isinstance(retrieved, query_pb2.RetrieveResponse)
    listed = call(channel, ingest_pb2.ListDocumentsRequest(page_size=1000))
    assert isinstance(listed, ingest_pb2.ListDocumentsResponse)


def test_several_problems_are_reported_together(channel: grpc.Channel) -> None:
    request_ = q("", workspace="bad workspace", params=P(top_k=-1, mode=9))  # type: ignore[arg-type]
    with pytest.raises(grpc.RpcError) as caught:
        call(channel, request_)
    status = rpc_status.from_call(caught.value)  # type: ignore[arg-type]
    assert status is not None
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert [v.field for v in bad_request.field_violations] == [
        "workspace",
        "query",
        "params.mode",
        "params.top_k",
    ]


def test_messages_beyond_the_configured_size_are_refused(channel: grpc.Channel) -> None:
    big = publish(D(doc_id="big", content="x" * 1_500_000))
    with pytest.raises(grpc.RpcError) as caught:
        call(channel, big)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_errors_do_not_echo_the_offending_values(channel: grpc.Channel) -> None:
    secret = "Confidential merger terms with Kestrel"
    request_ = q(secret * 300, params=P(hl_keywords=[secret * 10], user_prompt=secret * 300))
    with pytest.raises(grpc.RpcError) as caught:
        call(channel, request_)
    error = caught.value
    assert isinstance(error, grpc.Call)
    status = rpc_status.from_call(error)
    assert status is not None
    assert secret not in (error.details() or "")
    assert secret.encode() not in status.SerializeToString()
