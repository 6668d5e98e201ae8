"""The web console in a real browser (headless Chromium) against a server holding the demo
corpus: documents listed with their status, a question answered with references and
timings, an entity's neighbourhood drawn, and a click on a node expanding the drawing.

The screenshots are written to tests/output/console/ (ignored by git; CI keeps it as an
artifact), beside the browser's log.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from ragstream.cli.files import read_all
from tests.e2e.conftest import DEMO_CORPUS, DEMO_WORKSPACE, publish_and_wait
from tests.support.browser import Page, chromium
from tests.support.server import REPO, ServeProcess

pytestmark = pytest.mark.e2e
OUTPUT = REPO / "tests" / "output" / "console"
COMPANY = "halvorsen aquatics"


def count(selector: str) -> str:
    return f"document.querySelectorAll({json.dumps(selector)}).length"


async def drawn_keys(page: Page) -> set[str]:
    return set(await page.evaluate("window.ragstreamGraph.keys()"))


async def node_at(page: Page, key: str) -> dict[str, float]:
    """Where a drawn node's centre is on the page (CSS pixels)."""
    at: dict[str, float] = await page.evaluate(
        f"window.ragstreamGraph.positionOf({json.dumps(key)})"
    )
    return at


async def check_documents(page: Page) -> None:
    documents, _ = read_all([DEMO_CORPUS])
    processed = "#document-table tr.state-processed"
    await page.wait_for(f"{count(processed)} >= {len(documents)}")
    shown = await page.evaluate(
        f"[...document.querySelectorAll('{processed}')].map(r => r.dataset.doc)"
    )
    assert {d.doc_id for d in documents} <= set(shown)
    assert int(await page.evaluate("document.getElementById('entity-count').textContent")) > 50
    assert await page.evaluate("document.getElementById('pending-merges').textContent") == "0"


async def check_query(page: Page) -> None:
    await page.click("#tabs button[data-tab=query]")
    await page.type("#question", "Which supplier made the seal that caused the Tern S3 recall?")
    await page.evaluate("document.getElementById('mode').value = 'QUERY_MODE_MIX'")
    await page.click("#ask")
    await page.wait_for("document.getElementById('answer').dataset.done === 'true'", 120)
    answer = await page.evaluate("document.getElementById('answer').textContent")
    assert "[1]" in answer or "[2]" in answer, answer  # it cites its references
    references = await page.evaluate(
        "[...document.querySelectorAll('#references li')].map(li => li.dataset.doc)"
    )
    corpus = {d.doc_id for d in read_all([DEMO_CORPUS])[0]}
    assert references and set(references) <= corpus
    assert await page.evaluate(count("#context-chunks .chunk")) >= 1
    stages = await page.evaluate(
        "[...document.querySelectorAll('#timings td:first-child')].map(td => td.textContent)"
    )
    assert {"embed", "answer"} <= set(stages)


async def check_graph(page: Page) -> int:
    await page.click("#tabs button[data-tab=graph]")
    await page.type("#entity-query", "Halvorsen")
    await page.click("#entity-form button[type=submit]")
    hit = f'#entity-hits-list [data-key="{COMPANY}"]'
    await page.wait_for(f"document.querySelector({json.dumps(hit)}) !== null")
    # The company the corpus is about comes before its founder, whose surname it carries.
    listed = await page.evaluate(
        "[...document.querySelectorAll('#entity-hits-list [data-key]')].map(e => e.dataset.key)"
    )
    assert listed[:2] == [COMPANY, "ingrid halvorsen"], listed
    await page.click(hit)
    await page.wait_for(f"window.ragstreamGraph.selected === {json.dumps(COMPANY)}")
    drawn = await drawn_keys(page)
    assert {COMPANY, "ingrid halvorsen", "tomasz brejcha", "tern s3", "skua 3"} <= drawn
    assert await page.evaluate("window.ragstreamGraph.graph.size") >= len(drawn) - 1
    details = await page.wait_for("document.getElementById('details').textContent")
    assert "Halvorsen Aquatics" in details and "Source chunks" in details
    return len(drawn)


async def check_expansion(page: Page, before: int) -> None:
    """A click on a node draws its neighbours beside it; the nodes drawn stay put."""
    drawn = sorted(await drawn_keys(page))
    where = {key: await node_at(page, key) for key in drawn}
    parent = where["tern s3"]
    await page.click_at(parent["x"], parent["y"])
    await page.wait_for("window.ragstreamGraph.container.dataset.expanded === 'tern s3'")
    after = await drawn_keys(page)
    assert len(after) > before
    for key in drawn:
        moved = await node_at(page, key)
        assert abs(moved["x"] - where[key]["x"]) < 0.5 and abs(moved["y"] - where[key]["y"]) < 0.5
    await page.wait_for("document.querySelector('#details h3')?.textContent === 'Tern S3'")
    assert await page.evaluate(count("#details .chunk")) >= 1


@contextlib.asynccontextmanager
async def console(
    server: ServeProcess, tmp_path: Path, log: str, tab: str, workspace: str = DEMO_WORKSPACE
) -> AsyncIterator[Page]:
    """A browser showing the console's `tab` on `workspace`; its log in OUTPUT."""
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with chromium(tmp_path / "profile", OUTPUT / log) as page:
        await page.goto(f"http://{server.http_address}/?workspace={workspace}&tab={tab}")
        yield page


async def test_the_console_answers_draws_and_expands(
    demo_http_server: ServeProcess, tmp_path: Path
) -> None:
    async with console(demo_http_server, tmp_path, "chromium.log", "documents") as page:
        await check_documents(page)
        await page.screenshot(OUTPUT / "documents.png")
        await check_query(page)
        await page.screenshot(OUTPUT / "query.png")
        before = await check_graph(page)
        await check_expansion(page, before)
        shot = await page.screenshot(OUTPUT / "graph.png")
        assert shot.stat().st_size > 10_000
        assert page.errors == []


async def test_a_resolved_entity_lists_its_aliases(
    demo_http_server: ServeProcess, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "mainframes.md").write_text(
        "International Business Machines (IBM) builds mainframes in Armonk.\n\n"
        "IBM sold its PC division to Lenovo in 2005.\n"
    )
    with grpc.insecure_channel(demo_http_server.address) as channel:
        publish_and_wait(channel, "aliases", corpus)
    async with console(demo_http_server, tmp_path, "aliases.log", "graph", "aliases") as page:
        await page.type("#entity-query", "International Business Machines")
        await page.click("#entity-form button[type=submit]")
        await page.wait_for("document.querySelector('#details h3')?.textContent === 'IBM'")
        shown = await page.evaluate("document.querySelector('#details .aliases').textContent")
        listed = await page.evaluate("document.querySelector('#entity-hits-list').textContent")
        assert page.errors == []
    assert shown == "Also named: International Business Machines"
    assert "IBM (organization) · also International Business Machines" in listed
