"""Another site's page against the HTTP port of a server with auth off (the default), in
headless Chromium: the page, served from another local port, tries every write a browser
sends without asking the server first (text/plain and no-cors fetches, a beacon, forms
whose text/plain body is valid JSON, a multipart form and a no-cors fetch uploading a
file) and a JSON fetch and an upload with its header, which need a CORS preflight. Each
reaches the port and is refused; the API shows nothing published and nothing deleted. A
forged Host header (DNS rebinding) is refused too, sent byte for byte over a socket.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.support.browser import Page, chromium
from tests.support.http_json import call, publish, raw_request
from tests.support.server import REPO, ServeProcess, free_port

pytestmark = pytest.mark.e2e
OUTPUT = REPO / "tests" / "output" / "cross-site"
WORKSPACE = "default"
VICTIM = "victim.md"
ATTACKS = (Path(__file__).parent / "cross_site_attacks.js").read_text(encoding="utf-8")
WRITES_SENT = 10
"""POSTs ATTACKS sends to the port: five fetches, a beacon, four forms (the JSON fetch and
the upload with its header send only their preflights, which are refused, so their POSTs
never leave the browser)."""


@pytest.fixture
async def other_site() -> AsyncIterator[str]:
    """An origin of its own: a blank page on another local port."""
    app = web.Application()
    page = "<!doctype html><title>another site</title><body></body>"

    async def blank(request: web.Request) -> web.Response:
        return web.Response(text=page, content_type="text/html")

    app.router.add_get("/", blank)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def documents(address: str) -> dict[str, str]:
    status, reply = call(address, f"/v1/documents/list?workspace={WORKSPACE}")
    assert status == 200, reply
    return {d["docId"]: d["state"] for d in reply["documents"]}


async def answers_to(page: Page, target: str, posts: int) -> list[tuple[str, str, int]]:
    """The responses the page received from `target`, once `posts` POSTs are answered."""
    for _ in range(300):
        received = [r for r in page.responses if r[1].startswith(target)]
        if sum(method == "POST" for method, _, _ in received) >= posts:
            return received
        await asyncio.sleep(0.1)
    raise AssertionError(f"only {received} after 30 s")


@pytest.fixture(scope="module")
def address(demo_http_server: ServeProcess) -> str:
    """The HTTP port, its workspace holding the one document the attacks try to delete."""
    assert demo_http_server.http_address is not None
    publish(demo_http_server.http_address, WORKSPACE, {VICTIM: "Kestrel Polymers made seals."})
    return demo_http_server.http_address


async def test_another_sites_page_cannot_publish_or_delete(
    address: str, other_site: str, tmp_path: Path
) -> None:
    target = f"http://{address}"
    OUTPUT.mkdir(parents=True, exist_ok=True)
    async with chromium(tmp_path / "profile", OUTPUT / "chromium.log") as page:
        await page.goto(other_site)
        outcomes = await page.evaluate(f"(\n{ATTACKS}\n)({json.dumps(target)})")
        received = await answers_to(page, target, WRITES_SENT)
    assert documents(address) == {VICTIM: "DOCUMENT_STATE_PROCESSED"}
    assert outcomes[1:4] + outcomes[5:6] == ["opaque"] * 4  # no-cors: sent, answer hidden
    assert all(o.startswith("rejected") for o in (outcomes[0], outcomes[4], outcomes[6]))
    assert {status for _, _, status in received} == {403}, received  # the Origin check
    assert {m for m, _, _ in received} <= {"POST", "OPTIONS"}


def test_a_forged_host_header_is_refused(address: str) -> None:
    port = address.rsplit(":", 1)[1]
    body = json.dumps({"workspace": WORKSPACE, "docIds": [VICTIM]}).encode()
    delete = (
        "POST /v1/documents/delete HTTP/1.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}"
    )
    for path in ("/", "/console/main.js", f"/v1/documents/list?workspace={WORKSPACE}"):
        status, text = raw_request(address, f"GET {path} HTTP/1.1\r\nHost: attacker.example:8088")
        assert status == 403 and "server.http_allowed_hosts" in text, text
        assert raw_request(address, f"GET {path} HTTP/1.1\r\nHost: localhost:{port}")[0] == 200
    status, text = raw_request(address, f"{delete}\r\nHost: attacker.example:{port}", body)
    assert status == 403 and '"code": 7' in text, text
    assert raw_request(address, f"{delete}\r\nHost: attacker.example", body)[0] == 403
    assert documents(address) == {VICTIM: "DOCUMENT_STATE_PROCESSED"}
