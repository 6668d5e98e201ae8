"""A document holding every character some client takes for a line's end (U+2028, U+2029,
U+0085, lone CRs) answered over server-sent events: curl's bytes decode per the SSE
specification, and even split at every line end Python knows, into events whose data are
all valid JSON; the console shows the answer and its context, and its own event reader
decodes the same stream event for event."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import chromium
from tests.support.http_json import publish
from tests.support.server import REPO, ServeProcess
from tests.support.sse import events

pytestmark = pytest.mark.e2e
OUTPUT = REPO / "tests" / "output" / "sse"
WORKSPACE = "separators"
SEPARATORS = ("\u2028", "\u2029", "\u0085", "\r")
DOCUMENT = (
    "Kestrel Polymers made the seals\u2028of the Tern S3 drone.\u2029The Tern S3 recall "
    "began in 2024.\u0085Its seals were made\rin Bergen\rby Kestrel Polymers.\r\n"
)
QUESTION = "Who made the seals of the Tern S3 drone?"
READ_IN_THE_PAGE = """
async (body) => {
  const { EventParser } = await import("/console/sse.js");
  const response = await fetch("/v1/query/stream", {
    method: "POST", headers: {"content-type": "application/json"}, body: JSON.stringify(body),
  });
  const found = [];
  const parser = new EventParser((name, data) => found.push([name, JSON.parse(data)]));
  parser.push(await response.text(), true);
  return found;
}
"""


@pytest.fixture(scope="module")
def address(demo_http_server: ServeProcess) -> str:
    assert demo_http_server.http_address is not None
    publish(demo_http_server.http_address, WORKSPACE, {"separators.txt": DOCUMENT})
    return demo_http_server.http_address


def curl_stream(address: str) -> str:
    body = json.dumps({"workspace": WORKSPACE, "query": QUESTION})
    json_type = "content-type: application/json"
    done = subprocess.run(
        ["curl", "-sN", f"http://{address}/v1/query/stream", "-H", json_type, "-d", body],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return done.stdout.decode("utf-8")


def context_text(decoded: list[tuple[str, Any]]) -> str:
    """The text of the chunks the `context` event holds."""
    [event] = [data for name, data in decoded if name == "context"]
    assert isinstance(event, dict)
    return "".join(c["content"] for c in event["context"]["context"]["chunks"])


def test_curl_reads_every_event_as_json(address: str) -> None:
    stream = curl_stream(address)
    decoded = [(name, json.loads(data)) for name, data in events(stream)]
    assert decoded[0][0] == "context" and decoded[-1][0] == "end"
    assert all(s in context_text(decoded) for s in SEPARATORS)
    data_lines = [line for line in stream.splitlines() if line.startswith("data: ")]
    assert [json.loads(line[6:]) for line in data_lines] == [d for _, d in decoded]


async def test_the_console_answers_and_reads_every_event(address: str, tmp_path: Path) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with chromium(tmp_path / "profile", OUTPUT / "chromium.log") as page:
        await page.goto(f"http://{address}/?workspace={WORKSPACE}")
        await page.click("#tabs button[data-tab=query]")
        await page.type("#question", QUESTION)
        await page.click("#ask")
        await page.wait_for("document.getElementById('answer').dataset.done === 'true'", 120)
        assert await page.evaluate("document.getElementById('error').hidden")
        shown = await page.evaluate("document.getElementById('context-chunks').textContent")
        assert all(s in shown for s in SEPARATORS)
        assert await page.evaluate("document.getElementById('answer').textContent")
        body = {"workspace": WORKSPACE, "query": QUESTION}
        read = await page.evaluate(f"(\n{READ_IN_THE_PAGE}\n)({json.dumps(body)})")
        await page.screenshot(OUTPUT / "query.png")
        assert page.errors == []
    expected = [(name, json.loads(data)) for name, data in events(curl_stream(address))]
    assert [name for name, _ in read] == [name for name, _ in expected]
    assert context_text(read) == context_text(expected)  # separators and all
