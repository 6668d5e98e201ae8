"""Cited answers end to end, on a real server with the OpenAI-compatible test server as LLM:
a 3-page PDF ingested with `ragstream ingest` gets page-level references over gRPC, HTTP/JSON
and `ragstream query`, and an answer's references are exactly the passages its [n] markers
cite."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.support.browser import chromium
from tests.support.documents import PAGE_QUESTIONS, PAGES, pdf_bytes
from tests.support.server import REPO, ServeProcess

pytestmark = pytest.mark.e2e
WS = "cite"
OUTPUT = REPO / "tests" / "output" / "console"
ASKED = "Who leads the Tern team, which supplier delivered lens orders, where were Skua trials?"
_REFERENCE = re.compile(r"^\[(\d+)\] .*?p\. (\d+)", re.MULTILINE)


def answer_citing_pages(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Extraction prompts get an empty extraction; an answer prompt gets two sentences citing
    the passages of pages 2 and 3 by the numbers its reference list gives them, and one
    marker that names no reference (which cites nothing)."""
    system = str(messages[0].get("content", "")) if messages else ""
    if "---References---" not in system:
        return "<|COMPLETE|>"
    pages = {page: ref for ref, page in _REFERENCE.findall(system.split("---References---")[1])}
    return (
        f"Kestrel Optics delivered lens orders on time [{pages['2']}]. "
        f"The Skua drone finished its sea trials in Bergen [{pages['3']}, 99]."
    )


@pytest.fixture(scope="module")
def llm() -> Iterator[OpenAITestServer]:
    """The test server on an event loop of its own thread, for the module's server."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    server = OpenAITestServer(responder=answer_citing_pages)
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(30)
    yield server
    asyncio.run_coroutine_threadsafe(server.close(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(30)
    loop.close()


@pytest.fixture(scope="module")
def served(
    llm: OpenAITestServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    env = {
        "RAGSTREAM_LLM__PROVIDER": "openai",
        "RAGSTREAM_LLM__MODEL": "cite-model",
        "RAGSTREAM_LLM__BASE_URL": llm.base_url,
        "RAGSTREAM_LLM__API_KEY": "sk-test-not-a-secret",
    }
    folder = tmp_path_factory.mktemp("docs")
    (folder / "report.pdf").write_bytes(pdf_bytes(PAGES, "Tern report"))
    with ServeProcess(tmp_path_factory.mktemp("serve") / "data", env, http=True) as server:
        result = ragstream(server, "ingest", str(folder), "--wait", "-w", WS)
        assert result.returncode == 0, result.stdout + result.stderr
        yield server


def ragstream(server: ServeProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragstream.cli.main", *args, "--server", server.address],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip


def naive(question: str) -> dict[str, Any]:
    return {"workspace": WS, "query": question, "params": {"mode": "QUERY_MODE_NAIVE"}}


def test_each_question_cites_its_page_over_grpc_http_and_the_command_line(
    served: ServeProcess,
) -> None:
    assert served.http_address is not None
    with grpc.insecure_channel(served.address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        for question, page in PAGE_QUESTIONS.items():
            params = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE)
            request = query_pb2.RetrieveRequest(workspace=WS, query=question, params=params)
            top = stub.Retrieve(request).references[0]
            assert (top.doc_id, top.first_page, top.last_page, top.title) == (
                "report.pdf", page, page, "Tern report"
            ), question  # fmt: skip
            http = urllib.request.Request(
                f"http://{served.http_address}/v1/retrieve",
                data=json.dumps(naive(question)).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(http, timeout=30) as reply:
                first = json.load(reply)["references"][0]
            assert (first["docId"], first["firstPage"], first["lastPage"]) == (
                "report.pdf", page, page
            )  # fmt: skip
            shown = ragstream(served, "query", question, "--context-only", "-m", "naive", "-w", WS)
            assert shown.returncode == 0, shown.stderr
            chunk_lines = [line for line in shown.stdout.splitlines() if "report.pdf" in line]
            assert chunk_lines[0].strip().startswith(f"[1] report.pdf, p. {page}"), shown.stdout


def test_an_answers_references_are_exactly_the_passages_its_markers_cite(
    served: ServeProcess,
) -> None:
    with grpc.insecure_channel(served.address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        params = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE, chunk_top_k=3)
        response = stub.Query(query_pb2.QueryRequest(workspace=WS, query=ASKED, params=params))
        streamed = list(
            stub.StreamQuery(query_pb2.StreamQueryRequest(workspace=WS, query=ASKED, params=params))
        )
    markers = set(re.findall(r"\d+", " ".join(re.findall(r"\[[\d, ]+\]", response.answer))))
    cited = {ref.reference_id for ref in response.references}
    assert cited == markers - {"99"} and len(cited) == 2
    assert sorted(ref.first_page for ref in response.references) == [2, 3]
    assert len(response.context_references) == 3
    assert sorted(ref.first_page for ref in streamed[-1].end.references) == [2, 3]
    shown = ragstream(served, "query", ASKED, "-m", "naive", "-w", WS)
    assert shown.returncode == 0, shown.stderr
    assert "p. 2" in shown.stdout and "p. 3" in shown.stdout and "p. 1" not in shown.stdout
    assert "(and 1 more in the context)" in shown.stdout


async def test_in_the_console_each_marker_opens_the_passage_it_cites(
    served: ServeProcess, tmp_path: Path
) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with chromium(tmp_path / "profile", OUTPUT / "chromium-citations.log") as page:
        await page.goto(f"http://{served.http_address}/?workspace={WS}")
        await page.click("#tabs button[data-tab=query]")
        await page.type("#question", ASKED)
        await page.evaluate("document.getElementById('mode').value = 'QUERY_MODE_NAIVE'")
        await page.type("#chunk-top-k", "3")
        await page.click("#ask")
        await page.wait_for("document.getElementById('answer').dataset.done === 'true'", 60)
        markers = await page.evaluate(
            "[...document.querySelectorAll('#answer a.cite')].map(a => a.dataset.ref)"
        )
        listed = await page.evaluate(
            "[...document.querySelectorAll('#references li')].map(li => li.textContent)"
        )
        assert len(markers) == 2 and "99" not in markers  # the slip stays text
        assert sorted(listed) == ["Tern report, p. 2", "Tern report, p. 3"]
        for ref in markers:
            selector = f'#answer a.cite[data-ref="{ref}"]'
            await page.click(selector)
            opened = await page.wait_for(
                "document.querySelector('.chunk.open')?.dataset.ref", timeout_s=10
            )
            href = await page.evaluate(f"document.querySelector('{selector}').hash")
            assert opened == ref
            assert await page.evaluate("document.querySelector('.chunk.open').id") == href[1:]
            head = await page.evaluate(
                "document.querySelector('.chunk.open .chunk-head').textContent"
            )
            assert head.startswith(f"[{ref}] Tern report, p. "), head
        await page.screenshot(OUTPUT / "citations.png")
        assert page.errors == []
