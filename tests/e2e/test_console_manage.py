"""Managing the index from the web console in a real browser (headless Chromium): a PDF, a
DOCX and an HTML file chosen in the console's file input are converted by the server,
indexed, and their entities found in the graph over HTTP; a document deleted from the
console leaves the graph, and comes back when its file is dropped on the tab again; a file that
cannot be indexed is refused 400 and the console says why; an older file is refused as
stale unless sent with its row's "replace", which indexes its text.

Screenshots go to tests/output/console/ (ignored by git), beside the browser's log.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.support.browser import Page, chromium
from tests.support.documents import corrupt_pdf_bytes, docx_bytes, pdf_bytes
from tests.support.server import REPO, ServeProcess

pytestmark = pytest.mark.e2e
OUTPUT = REPO / "tests" / "output" / "console"
WORKSPACE = "uploads"
PDF_TEXT = "Quorra Lindqvist founded Ventrell Dynamics in Bergen in 2009."
DOCX_TEXT = "Osric Tamblyn leads Harrowgate Optics, which supplies lenses to Ventrell Dynamics."
HTML_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Calloway Marine</title>
</head><body><article><h1>Calloway Marine</h1>
<p>Ysolde Marchetti directs Calloway Marine from its yard in Genoa.</p>
<p>Calloway Marine fits Ventrell Dynamics sonar to every hull it builds.</p>{extra}
</article></body></html>"""
REPLACED = "<p>Calloway Marine also builds ferries with Pellworth Shipyards in Rostock.</p>"
EMPTY_QUEUE = (
    "document.getElementById('pending-documents').textContent === '0'"
    " && document.getElementById('pending-merges').textContent === '0'"
)


def fixtures(folder: Path) -> dict[str, Path]:
    """The files a user would pick, made by the libraries the converters read them with."""
    files = {
        "ventrell.pdf": pdf_bytes([PDF_TEXT, "Ventrell Dynamics builds sonar buoys."], "Ventrell"),
        "harrowgate.docx": docx_bytes("Harrowgate Optics", [DOCX_TEXT]),
        "calloway.html": HTML_PAGE.format(extra="").encode(),
        "broken.pdf": corrupt_pdf_bytes(),
    }
    paths = {}
    for name, data in files.items():
        paths[name] = folder / name
        paths[name].write_bytes(data)
    return paths


def count(selector: str) -> str:
    return f"document.querySelectorAll({json.dumps(selector)}).length"


def row(doc_id: str, state: str) -> str:
    selector = f'#document-table tr.state-{state}[data-doc="{doc_id}"]'
    return f"document.querySelector({json.dumps(selector)}) !== null"


async def entity_names(base: str, query: str) -> set[str]:
    """The names SearchEntities finds for `query` in the upload workspace, over HTTP."""
    body = {"workspace": WORKSPACE, "query": query, "limit": 20}
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{base}/v1/graph/entities", json=body) as reply,
    ):
        hits: dict[str, Any] = await reply.json()
        assert reply.status == 200, hits
    return {hit["entity"]["name"].lower() for hit in hits.get("hits", [])}


async def found(base: str, name: str, present: bool = True, timeout_s: float = 60) -> None:
    """Waits until the graph holds (or no longer holds) the entity `name`: the merges of a
    document's entities follow its status by a moment."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while (name.lower() in await entity_names(base, name)) != present:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{name!r} {'not ' if present else ''}in the graph")
        await asyncio.sleep(0.5)


async def indexed(page: Page, doc_ids: list[str]) -> None:
    await page.wait_for(" && ".join(row(d, "processed") for d in doc_ids), 180)
    await page.wait_for(EMPTY_QUEUE, 120)


async def check_uploads(page: Page, base: str, files: dict[str, Path]) -> None:
    docs = ["ventrell.pdf", "harrowgate.docx", "calloway.html"]
    await page.set_files("#upload-files", [files[d] for d in docs])
    await indexed(page, docs)
    outcomes = await page.evaluate(
        "[...document.querySelectorAll('#upload-results li')].map(li => li.className)"
    )
    assert outcomes == ["outcome-accepted"] * 3
    said = await page.evaluate("document.getElementById('upload-results').textContent")
    assert "pdf, 2 pages" in said
    for name in ("Quorra Lindqvist", "Ventrell Dynamics", "Osric Tamblyn", "Ysolde Marchetti"):
        await found(base, name)


async def check_refusal(page: Page, files: dict[str, Path]) -> None:
    await page.set_files("#upload-files", [files["broken.pdf"]])
    refused = "#upload-results li.error[data-file='broken.pdf']"
    message = await page.wait_for(f"document.querySelector({json.dumps(refused)})?.textContent")
    assert "broken.pdf" in message and "damaged PDF" in message
    statuses = [s for m, url, s in page.responses if m == "POST" and "/v1/documents/upload" in url]
    assert sorted(statuses) == [200, 200, 200, 400]  # the three uploads, then this one


async def check_delete(page: Page, base: str) -> None:
    button = 'tr[data-doc="harrowgate.docx"] button.delete'
    await page.click(button)
    await page.wait_for(f"document.querySelector('{button}').textContent === 'confirm delete'")
    await page.click(button)
    await page.wait_for(row("harrowgate.docx", "deleted"), 120)
    await page.wait_for(EMPTY_QUEUE, 120)
    await found(base, "Osric Tamblyn", present=False)
    await found(base, "Ventrell Dynamics")  # the other documents still name it


async def check_restore(page: Page, base: str, files: dict[str, Path]) -> None:
    """A file uploaded after its document was deleted brings it back, as `ingest` does;
    this one is dropped on the tab from outside the browser."""
    await page.drop_files("#document-table", [files["harrowgate.docx"]])
    await page.wait_for(f"{count('#upload-results li.outcome-accepted')} === 4")
    await indexed(page, ["harrowgate.docx"])
    await found(base, "Osric Tamblyn")


async def check_replace(page: Page, base: str, folder: Path) -> None:
    """An edited file dated before the indexed version: an upload of it is stale, and
    "replace" on the document's row makes it the document all the same."""
    edited = folder / "v2" / "calloway.html"
    edited.parent.mkdir()
    edited.write_text(HTML_PAGE.format(extra=REPLACED))
    os.utime(edited, (1e9, 1e9))  # 2001
    await page.set_files("#upload-files", [edited])
    await page.wait_for(f"{count('#upload-results li.outcome-stale')} === 1")
    await page.click('tr[data-doc="calloway.html"] button.replace')
    await page.set_files("#replace-file", [edited])
    await page.wait_for(f"{count('#upload-results li.outcome-accepted')} === 5")
    await found(base, "Pellworth Shipyards", timeout_s=120)
    await indexed(page, ["calloway.html"])


async def test_files_are_uploaded_deleted_and_replaced_from_the_console(
    demo_http_server: ServeProcess, tmp_path: Path
) -> None:
    base = f"http://{demo_http_server.http_address}"
    files = fixtures(tmp_path)
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with chromium(tmp_path / "profile", OUTPUT / "chromium-manage.log") as page:
        await page.goto(f"{base}/?workspace={WORKSPACE}")
        await check_uploads(page, base, files)
        await page.screenshot(OUTPUT / "uploaded.png")
        await check_refusal(page, files)
        await page.screenshot(OUTPUT / "refused.png")
        await check_delete(page, base)
        await check_restore(page, base, files)
        await check_replace(page, base, tmp_path)
        await page.screenshot(OUTPUT / "deleted-and-replaced.png")
        assert page.errors == []
