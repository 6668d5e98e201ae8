"""No API key, bearer token or document text in logs, spans or error messages.

The same traffic (publish, index, every query RPC, a malformed request made of document
text, a wrong token that is really the LLM's API key, a failing LLM, an expired deadline)
runs twice: against a server in this process, where every log record and every finished
span is captured, and against a real `ragstream serve`, whose whole output is scanned.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragstream.common.config import load_settings
from ragstream.common.registry import open_backends
from ragstream.indexer.main import run_stages
from ragstream.indexer.stages.extract.parser import COMPLETION_MARKER
from ragstream.query.main import build_server
from ragstream.testing.openai_server import OpenAITestServer, echo_responder
from ragstream.v1 import common_pb2, ingest_pb2, ingest_pb2_grpc, query_pb2, query_pb2_grpc
from tests.support.server import ServeProcess, openai_embedding_env

pytestmark = pytest.mark.e2e
LLM_KEY = "sk-llm-3f9a0c71e5d24b8e"
EMBEDDING_KEY = "sk-emb-a81c6d0f27b94e35"
TOKEN = "tok-secret-b4e09d1a"
MARKER = "Marigold-7781-QZ"
DOCUMENT = (
    f"The vault code of project {MARKER} is kept by Ines Duarte in Lisbon. "
    "Ines Duarte reviews the vault every Tuesday with the Harbor Security team."
)
SECRETS = (LLM_KEY, EMBEDDING_KEY, TOKEN, MARKER)
METADATA = (("authorization", f"Bearer {TOKEN}"),)


def settings_env(llm: OpenAITestServer, tokens_file: Path) -> dict[str, str]:
    return {
        "RAGSTREAM_LLM__PROVIDER": "openai",
        "RAGSTREAM_LLM__MODEL": "test-chat",
        "RAGSTREAM_LLM__BASE_URL": llm.base_url,
        "RAGSTREAM_LLM__API_KEY": LLM_KEY,
        "RAGSTREAM_LLM__MAX_RETRIES": "0",
        **openai_embedding_env(llm.base_url, api_key=EMBEDDING_KEY),
        "RAGSTREAM_AUTH__ENABLED": "true",
        "RAGSTREAM_AUTH__TOKENS_FILE": str(tokens_file),
    }


def write_tokens(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.toml"
    path.write_text(f'[[tokens]]\nname = "reader"\ntoken = "{TOKEN}"\nworkspaces = ["*"]\n')
    return path


def responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Extraction prompts get an empty, well-formed extraction (the indexer's own error
    texts are not under test here); every other prompt gets the default echo."""
    if any(COMPLETION_MARKER in str(m.get("content")) for m in messages):
        return COMPLETION_MARKER
    return echo_responder(messages, body)


@pytest.fixture
async def llm() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(responder=responder) as server:
        yield server


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Finished spans of this process. The tracer provider can be set once per process: a
    provider installed earlier gets the exporter added instead of being replaced."""
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.shutdown()


async def exercise(address: str, llm: OpenAITestServer) -> list[str]:
    """Drives every kind of call; returns what the client was told in errors."""
    errors: list[str] = []
    async with grpc.aio.insecure_channel(address) as channel:
        ingest = ingest_pb2_grpc.IngestServiceStub(channel)
        query = query_pb2_grpc.QueryServiceStub(channel)
        document = ingest_pb2.DocumentInput(doc_id="vault.md", content=DOCUMENT)
        await ingest.PublishDocuments(
            ingest_pb2.PublishDocumentsRequest(workspace="s", documents=[document]),
            metadata=METADATA,
        )
        await wait_processed(ingest)
        question = "Who keeps the vault code?"
        await query.Query(query_pb2.QueryRequest(workspace="s", query=question), metadata=METADATA)
        request = query_pb2.StreamQueryRequest(workspace="s", query=question)
        _ = [event async for event in query.StreamQuery(request, metadata=METADATA)]
        retrieved = await query.Retrieve(
            query_pb2.RetrieveRequest(workspace="s", query=question), metadata=METADATA
        )
        assert MARKER in retrieved.context.chunks[0].content  # the text is there to leak
        failing: list[tuple[Any, Any]] = [
            (query_pb2.QueryRequest(workspace="s", query=DOCUMENT * 200), METADATA),
            (query_pb2.QueryRequest(workspace="s", query=question), (("authorization", f"Bearer {LLM_KEY}"),)),  # noqa: E501
            (query_pb2.QueryRequest(workspace="s", query=DOCUMENT), METADATA),  # the LLM fails
        ]  # fmt: skip
        llm.fail_next("chat", 1, status=500)
        for request_, metadata in failing:
            errors.append(await error_of(query.Query(request_, metadata=metadata)))
        llm.set_latency("chat", 2.0)
        errors.append(await error_of(query.Query(failing[2][0], metadata=METADATA, timeout=0.3)))
        llm.set_latency("chat", 0.0)
    return errors


async def wait_processed(ingest: ingest_pb2_grpc.IngestServiceAsyncStub) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        request = ingest_pb2.GetDocumentStatusRequest(workspace="s", doc_ids=["vault.md"])
        reply = await ingest.GetDocumentStatus(request, metadata=METADATA)
        if reply.documents and reply.documents[0].state == common_pb2.DOCUMENT_STATE_PROCESSED:
            return
        await asyncio.sleep(0.2)
    raise TimeoutError(f"document not indexed in time: {reply}")


async def error_of(call: Any) -> str:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        trailers = repr(error.trailing_metadata())
        return f"{error.code().name} {error.details()} {trailers}"
    raise AssertionError("the call was expected to fail")


def span_text(span: ReadableSpan) -> str:
    parts = [span.name, str(dict(span.attributes or {})), str(span.status.description)]
    for event in span.events:
        parts += [event.name, str(dict(event.attributes or {}))]
    for link in span.links:
        parts.append(str(dict(link.attributes or {})))
    return "\n".join(parts)


def assert_clean(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} found in {where}"


async def test_in_process_logs_spans_and_errors_hold_no_secret(
    tmp_path: Path,
    llm: OpenAITestServer,
    spans: InMemorySpanExporter,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in settings_env(llm, write_tokens(tmp_path)).items():
        monkeypatch.setenv(name, value)
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="ragstream")
    settings = load_settings(data_dir=tmp_path / "data")
    stop = asyncio.Event()
    async with open_backends(settings) as backends:
        server = build_server(settings, backends, "127.0.0.1:0")
        await server.start()
        indexer = asyncio.create_task(run_stages(settings, backends, stop))
        try:
            errors = await exercise(f"127.0.0.1:{server.port}", llm)
        finally:
            stop.set()
            await indexer
            await server.stop(grace_s=1.0)
    assert [e.split()[0] for e in errors] == [
        "INVALID_ARGUMENT",
        "UNAUTHENTICATED",
        "UNKNOWN",
        "DEADLINE_EXCEEDED",
    ]
    for error in errors:
        assert_clean("an error sent to the client", error)
    formatter = logging.Formatter("%(name)s %(levelname)s %(message)s")
    records = [formatter.format(record) for record in caplog.records]
    assert any("denied" in r or "ragstream" in r for r in records)  # logging was captured
    for record in records:
        assert_clean("a log record", record)
    finished = spans.get_finished_spans()
    assert {"ragstream.v1.QueryService/Query", "ragstream.v1.IngestService/PublishDocuments"} <= {
        s.name for s in finished
    }
    for span in finished:
        assert_clean(f"span {span.name}", span_text(span))


async def test_serve_output_holds_no_secret(tmp_path: Path, llm: OpenAITestServer) -> None:
    env = {
        **settings_env(llm, write_tokens(tmp_path)),
        "RAGSTREAM_LOG_LEVEL": "DEBUG",
        "OTEL_TRACES_EXPORTER": "console",
    }
    process = await asyncio.to_thread(ServeProcess(tmp_path / "data", env).start)
    try:
        errors = await exercise(process.address, llm)
    finally:
        await asyncio.to_thread(process.stop)
    assert len(errors) == 4
    output = process.log_path.read_text(errors="replace")
    assert "gRPC server listening" in output
    assert_clean("the output of ragstream serve", output + "\n".join(errors))
