"""The console with auth on, in headless Chromium: a token put in the address is dropped
unread, the token typed in the page works and appears in no URL the page ever requests,
and a refusal of the workspace (403) or of the token (401) clears every view, so nothing
read with the previous token or workspace stays on screen. An upload passes the same gate:
sent with the token to its workspace it is accepted, to another workspace it is refused
with the reason shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragstream.query.transport.auth import token_digest
from tests.support.browser import Page, chromium
from tests.support.http_json import demo_documents, publish
from tests.support.server import REPO, ServeProcess

pytestmark = pytest.mark.e2e
OUTPUT = REPO / "tests" / "output" / "console-auth"
TOKEN = "tok-console-5d21a7"
GRANTED, OTHER = "alpha", "beta"
DOCUMENTS = ("company-overview.md", "leadership-team.md")
EMPTY_VIEWS = """({
  documents: document.querySelectorAll('#document-table tbody tr').length,
  entityCount: document.getElementById('entity-count').textContent,
  answer: document.getElementById('answer').textContent,
  chunks: document.querySelectorAll('#context-chunks .chunk').length,
  references: document.querySelectorAll('#references li').length,
  timings: document.querySelectorAll('#timings tr').length,
  nodes: window.ragstreamGraph.graph.order,
  legend: document.querySelectorAll('#graph-legend li').length,
  communities: document.querySelectorAll('#community-list li').length,
  details: document.getElementById('details').textContent,
})"""
CLEARED = {
    "documents": 0,
    "entityCount": "–",
    "answer": "",
    "chunks": 0,
    "references": 0,
    "timings": 0,
    "nodes": 0,
    "legend": 0,
    "communities": 0,
    "details": "Nothing selected.",
}


@pytest.fixture(scope="module")
def address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with auth on whose one token grants workspace alpha, holding two documents."""
    root = tmp_path_factory.mktemp("console-auth")
    tokens = root / "tokens.toml"
    grant = f'name = "reader"\nsha256 = "{token_digest(TOKEN)}"\nworkspaces = ["{GRANTED}"]'
    tokens.write_text(f"[[tokens]]\n{grant}\n")
    env = {"RAGSTREAM_AUTH__ENABLED": "true", "RAGSTREAM_AUTH__TOKENS_FILE": str(tokens)}
    with ServeProcess(root / "data", env, http=True) as process:
        assert process.http_address is not None
        publish(process.http_address, GRANTED, demo_documents(*DOCUMENTS), TOKEN)
        yield process.http_address


async def enter(page: Page, field: str, value: str) -> None:
    """Types into the workspace or token field and leaves it, as a user does."""
    await page.type(f"#{field}", value)
    await page.evaluate(f"document.getElementById('{field}').dispatchEvent(new Event('change'))")


async def fill_every_view(page: Page) -> None:
    await page.wait_for("document.querySelectorAll('#document-table tbody tr').length >= 2")
    await page.click("#tabs button[data-tab=query]")
    await page.type("#question", "Who founded Halvorsen Aquatics?")
    await page.click("#ask")
    await page.wait_for("document.getElementById('answer').dataset.done === 'true'", 120)
    await page.click("#tabs button[data-tab=graph]")
    await page.type("#entity-query", "Halvorsen")
    await page.click("#entity-form button[type=submit]")
    await page.wait_for("window.ragstreamGraph.graph.order > 0")
    await page.wait_for("document.querySelector('#details h3') !== null")
    await page.wait_for("document.querySelectorAll('#community-list li').length > 0")
    views = await page.evaluate(EMPTY_VIEWS)
    assert all(views[key] != empty for key, empty in CLEARED.items()), views


async def upload(page: Page, file: Path, kind: str) -> str:
    """Uploads `file` with the file input; the text of its line in the upload list."""
    await page.set_files("#upload-files", [file])
    line = f"#upload-results li.{kind}[data-file='{file.name}']"
    text: str = await page.wait_for(f"document.querySelector({line!r})?.textContent")
    return text


async def test_auth_errors_clear_the_views_and_the_token_stays_out_of_urls(
    address: str, tmp_path: Path
) -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with chromium(tmp_path / "profile", OUTPUT / "chromium.log") as page:
        typed = f"http://{address}/?workspace={GRANTED}&token={TOKEN}"
        await page.goto(typed)
        assert await page.evaluate("document.getElementById('token').value") == ""
        assert TOKEN not in await page.evaluate("location.href")
        notice = await page.evaluate("document.getElementById('notice').textContent")
        assert "token field" in notice
        await page.wait_for("!document.getElementById('error').hidden")  # 401: no token sent
        await enter(page, "token", TOKEN)
        await page.click("#tabs button[data-tab=documents]")
        await fill_every_view(page)
        note = tmp_path / "visit-notes.md"
        note.write_text("Ingrid Halvorsen visited the Ningbo laboratory in May 2025.\n")
        assert "accepted" in await upload(page, note, "outcome-accepted")
        await enter(page, "workspace", OTHER)  # 403: the token does not grant it
        await page.wait_for("window.ragstreamGraph.graph.order === 0")
        await page.screenshot(OUTPUT / "after-403.png")
        assert await page.evaluate(EMPTY_VIEWS) == CLEARED
        assert OTHER in await page.evaluate("document.getElementById('error').textContent")
        assert OTHER in await upload(page, note, "error")

        await enter(page, "workspace", GRANTED)
        await page.click("#tabs button[data-tab=documents]")
        await fill_every_view(page)
        await enter(page, "token", "not-a-token")  # 401
        await page.wait_for("window.ragstreamGraph.graph.order === 0")
        assert await page.evaluate(EMPTY_VIEWS) == CLEARED
        stored = await page.evaluate("sessionStorage.getItem('ragstream.token')")
        requested = [url for _, url, _ in page.responses if url != typed]
        history = await page.evaluate("performance.getEntriesByType('resource').map(e => e.name)")
        assert page.errors == []
    assert stored == "not-a-token"  # kept for the tab, as the README says
    assert any("/v1/" in url for url in requested)
    assert not [url for url in requested + history if TOKEN in url]
