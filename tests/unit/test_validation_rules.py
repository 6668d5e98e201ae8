"""The request rules: held to the proto, and each kind of check on its own."""

from collections.abc import Iterator

import pytest
from google.protobuf.descriptor import Descriptor

from ragstream.query.transport import validation
from ragstream.query.transport.convert import decode_page_token, encode_page_token
from ragstream.query.transport.interceptors import FAMILIES
from ragstream.query.transport.validation import RULES, Limits, Violation, validate, walks_into
from ragstream.v1 import common_pb2, graph_pb2, ingest_pb2, query_pb2

LIMITS = Limits(max_document_bytes=100)
SERVICES = [
    query_pb2.DESCRIPTOR.services_by_name["QueryService"],
    ingest_pb2.DESCRIPTOR.services_by_name["IngestService"],
    graph_pb2.DESCRIPTOR.services_by_name["GraphService"],
]


def reachable(root: Descriptor) -> Iterator[Descriptor]:
    yield root
    for field in root.fields:
        if walks_into(field) and field.message_type is not None:
            yield from reachable(field.message_type)


def request_messages() -> set[str]:
    names: set[str] = set()
    for service in SERVICES:
        for method in service.methods:
            names.update(m.full_name for m in reachable(method.input_type))
    return names


def message_descriptor(name: str) -> Descriptor:
    for module in (query_pb2, ingest_pb2, common_pb2, graph_pb2):
        for message in module.DESCRIPTOR.message_types_by_name.values():
            if message.full_name == name:
                found: Descriptor = message
                return found
    raise LookupError(name)


def test_every_field_of_every_request_message_has_rules() -> None:
    for name in request_messages():
        fields = {f.name for f in message_descriptor(name).fields}
        assert name in RULES, f"{name} has no rules"
        assert set(RULES[name]) == fields, f"{name}: rules and proto fields differ"


def test_no_rules_for_messages_no_request_contains() -> None:
    assert set(RULES) == request_messages()


def test_admission_families_name_real_methods() -> None:
    methods = {f"/{s.full_name}/{m.name}" for s in SERVICES for m in s.methods}
    assert set(FAMILIES) <= methods


def test_a_valid_request_has_no_violations() -> None:
    request = query_pb2.QueryRequest(
        workspace="team-a",
        query="what changed?",
        params=query_pb2.QueryParams(
            top_k=10,
            max_total_tokens=4000,
            cosine_threshold=-0.5,
            conversation_history=[query_pb2.ChatMessage(role="user", content="hi")],
            hl_keywords=["recall"],
        ),
        filter=common_pb2.SearchFilter(doc_ids=["a.md"], metadata={"lang": "en"}),
    )
    assert validate(request, LIMITS) == []


def test_violations_of_nested_messages_carry_their_path() -> None:
    request = query_pb2.QueryRequest(
        query="q",
        params=query_pb2.QueryParams(
            conversation_history=[
                query_pb2.ChatMessage(role="user"),
                query_pb2.ChatMessage(role="robot"),
            ]
        ),
    )
    assert validate(request, LIMITS) == [
        Violation(
            "params.conversation_history[1].role",
            "must be one of 'system', 'user', 'assistant'",
        )
    ]


def test_every_broken_rule_is_reported_up_to_the_cap() -> None:
    request = query_pb2.QueryRequest(
        workspace="bad workspace", query="", params=query_pb2.QueryParams(top_k=-1)
    )
    fields = [v.field for v in validate(request, LIMITS)]
    assert fields == ["workspace", "query", "params.top_k"]
    many = ingest_pb2.GetDocumentStatusRequest(doc_ids=[""] * 50)
    assert len(validate(many, LIMITS)) == validation.MAX_VIOLATIONS


def test_elements_of_an_oversized_list_are_not_walked() -> None:
    request = query_pb2.QueryRequest(
        query="q",
        params=query_pb2.QueryParams(conversation_history=[query_pb2.ChatMessage(role="x")] * 101),
    )
    assert [v.field for v in validate(request, LIMITS)] == ["params.conversation_history"]


def test_descriptions_never_quote_the_value() -> None:
    secret = "sk-very-secret-value"
    request = ingest_pb2.PublishDocumentsRequest(
        workspace=secret + " !",
        documents=[
            ingest_pb2.DocumentInput(
                doc_id=secret * 40, content=secret * 10, metadata={secret * 10: "v"}
            )
        ],
    )
    violations = validate(request, LIMITS)
    assert {v.field for v in violations} == {
        "workspace",
        "documents[0].doc_id",
        "documents[0].content",
        "documents[0].metadata",
    }
    assert not any(secret in v.description or secret in v.field for v in violations)


def test_content_limit_comes_from_configuration() -> None:
    request = ingest_pb2.PublishDocumentsRequest(
        documents=[ingest_pb2.DocumentInput(doc_id="a", content="é" * 60)]
    )
    assert [v.field for v in validate(request, LIMITS)] == ["documents[0].content"]
    assert validate(request, Limits(max_document_bytes=120)) == []


@pytest.mark.parametrize(
    ("value", "ok"),
    [(0, True), (256, True), (1_000_000, True), (255, False), (-1, False), (10**7, False)],
)
def test_zero_means_default_for_total_budget(value: int, ok: bool) -> None:
    request = query_pb2.QueryRequest(
        query="q", params=query_pb2.QueryParams(max_total_tokens=value)
    )
    assert (validate(request, LIMITS) == []) is ok


def test_nan_fails_range_and_finiteness_checks() -> None:
    nan = float("nan")
    request = query_pb2.QueryRequest(
        query="q", params=query_pb2.QueryParams(cosine_threshold=nan, min_rerank_score=nan)
    )
    assert [v.field for v in validate(request, LIMITS)] == [
        "params.cosine_threshold",
        "params.min_rerank_score",
    ]


def test_duplicates_blame_the_later_entry() -> None:
    publish = ingest_pb2.PublishDocumentsRequest(
        documents=[ingest_pb2.DocumentInput(doc_id=d) for d in ("a", "b", "a")]
    )
    assert validate(publish, LIMITS) == [
        Violation("documents[2].doc_id", "repeats documents[0].doc_id")
    ]
    delete = ingest_pb2.DeleteDocumentsRequest(doc_ids=["x", "x"])
    assert validate(delete, LIMITS) == [Violation("doc_ids[1]", "repeats doc_ids[0]")]


def test_page_tokens_round_trip_and_strangers_are_refused() -> None:
    for doc_id in ("", "a", "dir/ü.md", "x" * 512):
        token = encode_page_token(doc_id)
        assert decode_page_token(token) == doc_id
        assert validate(ingest_pb2.ListDocumentsRequest(page_token=token), LIMITS) == []
    for token in ("!!!", "YWJ", "YWJj\n", "é"):
        with pytest.raises(ValueError):
            decode_page_token(token)
        fields = [
            v.field for v in validate(ingest_pb2.ListDocumentsRequest(page_token=token), LIMITS)
        ]
        assert fields == ["page_token"]


def test_graph_requests_bound_names_depth_and_sizes() -> None:
    bad = graph_pb2.GetNeighbourhoodRequest(name=" ", depth=3, max_nodes=501)
    assert [v.field for v in validate(bad, LIMITS)] == ["name", "depth", "max_nodes"]
    good = graph_pb2.GetNeighbourhoodRequest(workspace="demo", name="Tern S3", depth=2)
    assert validate(good, LIMITS) == []
    one_end = graph_pb2.GetRelationRequest(source="Tern S3")
    assert [v.field for v in validate(one_end, LIMITS)] == ["target"]
    too_many = graph_pb2.SearchEntitiesRequest(query="Tern", limit=101)
    assert [v.field for v in validate(too_many, LIMITS)] == ["limit"]
    assert [v.field for v in validate(graph_pb2.GetGraphStatsRequest(top=-1), LIMITS)] == ["top"]


def test_doc_ids_need_a_visible_character_and_no_format_characters() -> None:
    delete = ingest_pb2.DeleteDocumentsRequest(
        doc_ids=["ok.md", "   ", "report\u202efdp.exe", "\u200b", "日本語.md"]
    )
    assert validate(delete, LIMITS) == [
        Violation("doc_ids[1]", "must contain a visible character"),
        Violation(
            "doc_ids[2]",
            "must not contain format characters (bidi controls, zero-width characters)",
        ),
        Violation(
            "doc_ids[3]",
            "must not contain format characters (bidi controls, zero-width characters)",
        ),
        Violation("doc_ids[3]", "must contain a visible character"),
    ]


def test_the_table_names_each_doc_id_rule() -> None:
    rules = RULES["ragstream.v1.DocumentInput"]["doc_id"]
    names = {getattr(rule, "__name__", "") for rule in rules}
    assert {"no_control_characters", "no_format_characters", "visible"} <= names
