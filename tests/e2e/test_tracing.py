"""Traces and metrics of a real `ragstream serve`, exported over OTLP/gRPC to a local receiver.

One server (hash embeddings, the OpenAI-compatible test server as its LLM with a secret-looking
API key) indexes a document and answers queries; the receiver in this process collects what
its OTLP exporters send. The checks: the span tree of a mix query, trace continuity from the
client's gRPC metadata and from the producer of an event (through IngestService and straight
through the embedded log), links from one embedding batch to every query it served, the
metrics, and that no document text or key left the process.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from ragstream.common.bus.protocols import OutgoingRecord
from ragstream.common.bus.sqlite_log import SqliteEventLog
from ragstream.common.events import DocumentChange, encode
from ragstream.common.storage.sqlite.db import Database
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.testing.openai_wire import Body
from ragstream.testing.otlp_receiver import OTLPReceiver, ReceivedSpan
from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc
from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
WORKSPACE = "traced"
DOCUMENTS, MERGES = "ragstream.documents", "ragstream.graph-merge"
PROCESS_MERGE = f"process {MERGES}"
API_KEY = "sk-test-secret-5d1f0c9a7e3b"
SECRET_SENTENCE = "The quartz-lined sealing ring cracked at minus forty degrees in Tromsø harbour."
DOCUMENT = (
    "Kestrel Polymers made the seals used in the Tern S3 bike computer. "
    f"{SECRET_SENTENCE} The Tern S3 was recalled in March 2024 after water got in."
)
SERVER, CONSUMER, PRODUCER = 2, 5, 4
QUERY_STAGES = {
    "keywords",
    "embed",
    "search_entities",
    "search_relations",
    "search_chunks",
    "graph_chunks",
    "fuse",
    "budget",
    "answer",
}
EXTRACTION = "\n".join(
    [
        "entity<|#|>Kestrel Polymers<|#|>organization<|#|>Kestrel Polymers made the seals.",
        "entity<|#|>Tern S3<|#|>product<|#|>The Tern S3 is a bike computer that was recalled.",
        "relation<|#|>Kestrel Polymers<|#|>Tern S3<|#|>supplier<|#|>Kestrel Polymers supplied "
        "the seals of the Tern S3.",
        "<|COMPLETE|>",
    ]
)


def respond(messages: list[Body], body: Body) -> str:
    """Keywords as JSON, extraction records, or an answer, by what the prompt asks for."""
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    if "high_level_keywords" in prompt:
        return json.dumps(
            {"high_level_keywords": ["seal supplier"], "low_level_keywords": ["Kestrel Polymers"]}
        )
    if "<|COMPLETE|>" in prompt:
        return EXTRACTION
    return "Kestrel Polymers made the seals [1]."


class BackgroundLLM:
    """The OpenAI-compatible test server on an event loop of its own thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.server = OpenAITestServer(responder=respond)

    def __enter__(self) -> OpenAITestServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self.server

    def __exit__(self, *exc_info: object) -> None:
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def new_parent() -> tuple[str, str, tuple[tuple[str, str], ...]]:
    """A caller's (trace id, span id) and the gRPC metadata that carries them."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, (("traceparent", f"00-{trace_id}-{span_id}-01"),)


def in_trace(receiver: OTLPReceiver, trace_id: str) -> list[ReceivedSpan]:
    return [s for s in receiver.spans() if s.trace_id == trace_id]


def one(spans: list[ReceivedSpan], name: str, parent: ReceivedSpan | None = None) -> ReceivedSpan:
    found = [
        s
        for s in spans
        if s.name == name and (parent is None or s.parent_span_id == parent.span_id)
    ]
    assert len(found) == 1, f"{len(found)} spans named {name!r}: {[s.name for s in spans]}"
    return found[0]


def children(spans: list[ReceivedSpan], parent: ReceivedSpan) -> set[str]:
    return {s.name for s in spans if s.parent_span_id == parent.span_id}


def has_names(trace_id: str, names: set[str]) -> Callable[[OTLPReceiver], bool]:
    return lambda r: names <= {s.name for s in in_trace(r, trace_id)}


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
        "OTEL_METRICS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_METRIC_EXPORT_INTERVAL": "500",
        "OTEL_SERVICE_NAME": "ragstream-e2e",
        "RAGSTREAM_EMBEDDING__PROVIDER": "hash",
        # Long enough that two queries sent together share one embedding call.
        "RAGSTREAM_EMBEDDING__BATCH_WINDOW_MS": "300",
        "RAGSTREAM_LLM__PROVIDER": "openai",
        "RAGSTREAM_LLM__MODEL": "test-chat",
        "RAGSTREAM_LLM__API_KEY": API_KEY,
    }
    with BackgroundLLM() as llm:
        env["RAGSTREAM_LLM__BASE_URL"] = llm.base_url
        with ServeProcess(tmp_path_factory.mktemp("traced") / "data", env) as process:
            yield process


def wait_processed(channel: grpc.Channel, doc_id: str) -> None:
    stub = ingest_pb2_grpc.IngestServiceStub(channel)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        request = ingest_pb2.GetDocumentStatusRequest(workspace=WORKSPACE, doc_ids=[doc_id])
        found = stub.GetDocumentStatus(request).documents
        if found and found[0].state == common_pb2.DOCUMENT_STATE_PROCESSED:
            return
        time.sleep(0.2)
    raise TimeoutError(f"{doc_id} not processed in time")


@pytest.fixture(scope="module")
def published(channel: grpc.Channel) -> tuple[str, str]:
    """The document, published through IngestService by a traced client: (trace, span)."""
    trace_id, span_id, metadata = new_parent()
    document = ingest_pb2.DocumentInput(doc_id="tern.md", content=DOCUMENT, file_path="tern.md")
    ingest_pb2_grpc.IngestServiceStub(channel).PublishDocuments(
        ingest_pb2.PublishDocumentsRequest(workspace=WORKSPACE, documents=[document]),
        metadata=metadata,
    )
    wait_processed(channel, "tern.md")
    return trace_id, span_id


def test_query_trace_continues_from_the_client_with_a_span_per_stage(
    receiver: OTLPReceiver, channel: grpc.Channel, published: object
) -> None:
    trace_id, parent, metadata = new_parent()
    query_pb2_grpc.QueryServiceStub(channel).Query(
        query_pb2.QueryRequest(
            workspace=WORKSPACE,
            query="Who made the seals of the Tern S3?",
            params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_MIX),
        ),
        metadata=metadata,
    )
    name = "ragstream.v1.QueryService/Query"
    receiver.wait_for(has_names(trace_id, {name, *QUERY_STAGES}))
    spans = in_trace(receiver, trace_id)
    rpc = one(spans, name)
    assert (rpc.parent_span_id, rpc.kind, rpc.service) == (parent, SERVER, "ragstream-e2e")
    assert rpc.attributes["rpc.system"] == "grpc"
    assert rpc.attributes["rpc.service"] == "ragstream.v1.QueryService"
    assert rpc.attributes["rpc.method"] == "Query"
    assert rpc.attributes["rpc.grpc.status_code"] == 0
    assert rpc.attributes["ragstream.mode"] == "mix"
    assert rpc.attributes["ragstream.workspace"] == WORKSPACE
    assert children(spans, rpc) >= QUERY_STAGES
    stages = {s.name: s for s in spans if s.parent_span_id == rpc.span_id}
    assert all(stages[n].attributes["ragstream.stage"] == n for n in QUERY_STAGES)
    assert stages["budget"].number("ragstream.chunks") >= 1
    for search in ("search_entities", "search_relations", "search_chunks"):
        assert "hybrid_search" in children(spans, stages[search])
    assert "graph_expand" in children(spans, stages["search_entities"])
    keywords_llm = one(spans, "chat test-chat", parent=stages["keywords"])
    assert keywords_llm.attributes["gen_ai.request.model"] == "test-chat"
    assert keywords_llm.attributes["gen_ai.system"] == "openai"
    assert keywords_llm.number("gen_ai.usage.input_tokens") > 0
    assert keywords_llm.number("gen_ai.usage.output_tokens") > 0
    one(spans, "chat test-chat", parent=stages["answer"])


def test_a_streamed_answer_is_traced_to_its_end(
    receiver: OTLPReceiver, channel: grpc.Channel, published: object
) -> None:
    trace_id, parent, metadata = new_parent()
    events = list(
        query_pb2_grpc.QueryServiceStub(channel).StreamQuery(
            query_pb2.StreamQueryRequest(workspace=WORKSPACE, query="Who made the seals?"),
            metadata=metadata,
        )
    )
    assert events[-1].WhichOneof("event") == "end"
    name = "ragstream.v1.QueryService/StreamQuery"
    receiver.wait_for(has_names(trace_id, {name, "answer", "chat test-chat"}))
    spans = in_trace(receiver, trace_id)
    rpc = one(spans, name)
    assert rpc.parent_span_id == parent
    assert rpc.attributes["rpc.grpc.status_code"] == 0
    one(spans, "chat test-chat", parent=one(spans, "answer", parent=rpc))


def test_a_refused_call_records_its_status_without_failing_the_span(
    receiver: OTLPReceiver, channel: grpc.Channel
) -> None:
    trace_id, _, metadata = new_parent()
    stub = query_pb2_grpc.QueryServiceStub(channel)
    with pytest.raises(grpc.RpcError) as refused:
        stub.Retrieve(query_pb2.RetrieveRequest(workspace=WORKSPACE, query=""), metadata=metadata)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    name = "ragstream.v1.QueryService/Retrieve"
    receiver.wait_for(has_names(trace_id, {name}))
    rpc = one(in_trace(receiver, trace_id), name)
    assert rpc.attributes["rpc.grpc.status_code"] == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert rpc.status_code == 0  # the caller's mistake, not a server error (RPC conventions)


def test_indexing_trace_continues_from_the_publishing_client(
    receiver: OTLPReceiver, published: tuple[str, str]
) -> None:
    trace_id, parent = published
    # Kestrel Polymers, Tern S3 and their relation, each merged once (beside them, keys of
    # same-as evidence such as "kestrel polymer" are merged too: they hold no mentions).
    receiver.wait_for(lambda r: len(_upserts(in_trace(r, trace_id))) == 3)
    spans = in_trace(receiver, trace_id)
    rpc = one(spans, "ragstream.v1.IngestService/PublishDocuments")
    assert rpc.parent_span_id == parent
    send = one(spans, f"send {DOCUMENTS}", parent=rpc)
    assert send.kind == PRODUCER
    process = one(spans, f"process {DOCUMENTS}", parent=send)
    assert process.kind == CONSUMER
    assert process.attributes["messaging.system"] == "sqlite"
    assert process.attributes["messaging.destination.name"] == DOCUMENTS
    assert process.attributes["ragstream.bus.message.key"] == f"{WORKSPACE}/tern.md"
    document = one(spans, "index_document", parent=process)
    assert document.attributes["ragstream.state"] == "processed"
    assert {"chunk", "write", "extract", "remove"} <= children(spans, document)
    extract = one(spans, "extract", parent=document)
    extraction = [s for s in spans if s.parent_span_id == extract.span_id]
    assert extraction and all(s.number("gen_ai.usage.output_tokens") > 0 for s in extraction)
    remove = one(spans, "remove", parent=document)
    publish_keys = one(spans, f"send {MERGES}", parent=remove)
    merges = _upserts(spans)
    assert len(merges) == 3
    assert all(m.parent_span_id == publish_keys.span_id for m in merges)
    evidence = [s for s in spans if s.name == PROCESS_MERGE and s not in merges]
    assert all(m.number("ragstream.mentions") == 0 for m in evidence)
    # Each key's merge is recorded on its own process span.
    kinds = sorted(str(m.attributes["ragstream.kind"]) for m in merges)
    assert kinds == ["entity", "entity", "relation"]
    assert all(m.attributes["ragstream.action"] == "upsert" for m in merges)
    assert all(m.number("ragstream.mentions") >= 1 for m in merges)


def _upserts(spans: list[ReceivedSpan]) -> list[ReceivedSpan]:
    """The merges that wrote a key (an evidence key's merge finds no mentions)."""
    return [
        s for s in spans if s.name == PROCESS_MERGE and s.attributes["ragstream.action"] == "upsert"
    ]


def publish_through_the_log(data_dir: Path, trace_id: str, span_id: str) -> None:
    """A producer that writes the embedded log directly, with its own traceparent."""
    change = DocumentChange(WORKSPACE, "direct.md", 1, False, "Kestrel Polymers moved to Oslo.")
    record = encode(change)
    traceparent = ("traceparent", f"00-{trace_id}-{span_id}-01".encode())
    stored = OutgoingRecord(record.key, record.value, (*record.headers, traceparent))

    async def publish() -> None:
        async with await Database.open(data_dir) as db:
            log = await SqliteEventLog.open(db)
            await log.publish(DOCUMENTS, [stored])

    asyncio.run(publish())


def test_indexing_trace_continues_from_the_embedded_events_stored_context(
    receiver: OTLPReceiver, server: ServeProcess, channel: grpc.Channel, published: object
) -> None:
    trace_id, parent, _ = new_parent()
    publish_through_the_log(server.data_dir, trace_id, parent)
    wait_processed(channel, "direct.md")
    receiver.wait_for(has_names(trace_id, {f"process {DOCUMENTS}", "index_document"}))
    spans = in_trace(receiver, trace_id)
    process = one(spans, f"process {DOCUMENTS}")
    assert process.parent_span_id == parent
    assert "index_document" in children(spans, process)


def test_one_embedding_batch_links_to_every_query_it_served(
    receiver: OTLPReceiver, channel: grpc.Channel, published: object
) -> None:
    # Three queries sent together. The first to reach the scheduler may find it idle and go
    # at once (a lone query does not wait for company); the others arrive within the 300 ms
    # window after it, so they share a call.
    stub = query_pb2_grpc.QueryServiceStub(channel)
    callers = [new_parent() for _ in range(3)]
    questions = ("Who made the seals?", "When was the Tern S3 recalled?", "What cracked?")
    calls = [
        stub.Query.future(
            query_pb2.QueryRequest(
                workspace=WORKSPACE,
                query=question,
                params=query_pb2.QueryParams(
                    mode=query_pb2.QUERY_MODE_NAIVE, only_need_context=True
                ),
            ),
            metadata=metadata,
        )
        for question, (_, _, metadata) in zip(questions, callers, strict=True)
    ]
    for call in calls:
        call.result(timeout=30)
    for trace_id, _, _ in callers:
        receiver.wait_for(has_names(trace_id, {"embed"}))
    embeds = {(t, one(in_trace(receiver, t), "embed").span_id) for t, _, _ in callers}

    def batches(r: OTLPReceiver) -> list[ReceivedSpan]:
        return [s for s in r.spans() if s.name == "embedding_batch" and embeds & set(s.links)]

    receiver.wait_for(lambda r: {link for s in batches(r) for link in s.links} >= embeds)
    served = batches(receiver)
    # Every query's request went in exactly one call, and that call's span links to it (a
    # call may also carry another caller's request, the indexer's for one).
    assert sorted(link for s in served for link in s.links if link in embeds) == sorted(embeds)
    assert len(served) < len(callers)
    for batch in served:
        assert batch.parent_span_id == ""  # its own trace: it belongs to every query it served
        assert batch.trace_id not in {t for t, _, _ in callers}
        assert batch.number("ragstream.requests") == len(batch.links)
        assert batch.attributes["gen_ai.operation.name"] == "embeddings"
    assert max(batch.number("ragstream.requests") for batch in served) >= 2


def test_metrics_are_exported(receiver: OTLPReceiver, published: object) -> None:
    wanted = {
        "ragstream.query.duration",
        "ragstream.query.stage.duration",
        "ragstream.embedding.batch.size",
        "ragstream.documents.processed",
        "ragstream.consumer.lag",
    }
    deadline = time.monotonic() + 30
    while not wanted <= {p.metric for p in receiver.points()} and time.monotonic() < deadline:
        time.sleep(0.2)
    points = receiver.points()
    assert wanted <= {p.metric for p in points}
    stages = [p for p in points if p.metric == "ragstream.query.stage.duration"]
    assert any(
        p.attributes == {"ragstream.mode": "mix", "ragstream.stage": "keywords"} for p in stages
    )
    processed = [p for p in points if p.metric == "ragstream.documents.processed"]
    assert max(p.value for p in processed if p.attributes["ragstream.state"] == "processed") >= 1
    lag = [p for p in points if p.metric == "ragstream.consumer.lag"]
    assert {p.attributes["messaging.destination.name"] for p in lag} >= {DOCUMENTS, MERGES}


def test_no_document_text_or_secret_leaves_the_process(
    receiver: OTLPReceiver, published: object
) -> None:
    """Runs last: scans every export request received from the server, byte for byte."""
    raw = receiver.raw()
    assert any(s.name == "chat test-chat" for s in receiver.spans())  # the key was in use
    for needle in (SECRET_SENTENCE, "quartz-lined", API_KEY, "sk-test-secret"):
        assert not any(needle.encode() in request for request in raw), needle
