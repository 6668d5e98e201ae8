"""Headless Chromium (Debian's package) driven over the Chrome DevTools Protocol.

`scripts/chromium.sh` installs the browser when it is missing (as root, e.g. in CI) and
prints its path. The browser starts with a new empty profile and the flags that keep it off
the network (no background networking, component updates, sync or QUIC), on a DevTools port
it picks itself; the protocol runs over aiohttp's WebSocket client, so the tests need no
driver binary and no browser download. Clicks are real mouse events at an element's centre,
so the page's own hit testing decides what is clicked. A page's errors are its uncaught
exceptions, console errors and Content-Security-Policy violations; every response it
receives is recorded with its status, opaque (no-cors) ones included.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import subprocess
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp

from tests.support.server import REPO

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--window-size=1500,1000",
    "--remote-debugging-port=0",
)

REPORT_CSP = (
    "document.addEventListener('securitypolicyviolation', (e) =>"
    " console.error(`CSP refused ${e.blockedURI} (${e.violatedDirective})`));"
)
"""Run in every document before its own scripts: the page's Content-Security-Policy
violations become console errors, so `Page.errors` holds them."""


class BrowserError(RuntimeError):
    """The browser or the page did not do what the test waited for."""


def chromium_binary() -> str:
    """Installs Chromium if missing; its path. Raises BrowserError saying what to do."""
    script = REPO / "scripts" / "chromium.sh"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BrowserError(f"{script} failed: {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1]


class Page:
    """One tab: commands, and the page's uncaught exceptions and console errors."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._events: dict[str, asyncio.Event] = {}
        self.errors: list[str] = []
        self._requests: dict[str, tuple[str, str]] = {}
        self._statuses: dict[str, int] = {}
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for frame in self._socket:
            message = json.loads(frame.data)
            if "id" in message and message["id"] in self._waiting:
                self._waiting.pop(message["id"]).set_result(message)
                continue
            method = message.get("method", "")
            if method == "Runtime.exceptionThrown":
                self.errors.append(json.dumps(message["params"]["exceptionDetails"])[:2000])
            elif method == "Runtime.consoleAPICalled" and message["params"]["type"] == "error":
                self.errors.append(json.dumps(message["params"]["args"])[:2000])
            elif method.startswith("Network."):
                self._network(method, message["params"])
            self._events.setdefault(method, asyncio.Event()).set()

    def _network(self, method: str, params: dict[str, Any]) -> None:
        # The raw response (ExtraInfo) may come before its request's event, and is the only
        # one for a response CORS refuses; responseReceived is the only one for the cache.
        if method == "Network.requestWillBeSent":
            request = params["request"]
            self._requests[params["requestId"]] = (request["method"], request["url"])
        elif method == "Network.responseReceivedExtraInfo":
            self._statuses[params["requestId"]] = params["statusCode"]
        elif method == "Network.responseReceived":
            self._statuses[params["requestId"]] = params["response"]["status"]

    @property
    def responses(self) -> list[tuple[str, str, int]]:
        """(method, URL, status) of every response the page's frames received, those the
        page may not read (no-cors, or refused by CORS) included."""
        known = self._statuses.keys() & self._requests.keys()
        return [(*self._requests[i], self._statuses[i]) for i in known]

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        await self._socket.send_json({"id": ident, "method": method, "params": params})
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result

    async def goto(self, url: str) -> None:
        loaded = self._events.setdefault("Page.loadEventFired", asyncio.Event())
        loaded.clear()
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(loaded.wait(), 30)

    async def evaluate(self, expression: str) -> Any:
        reply = await self.send(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    async def wait_for(self, expression: str, timeout_s: float = 30.0) -> Any:
        """The value of `expression` once it is truthy; BrowserError after timeout_s."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            value = await self.evaluate(expression)
            if value:
                return value
            if asyncio.get_running_loop().time() > deadline:
                raise BrowserError(f"still false after {timeout_s:.0f} s: {expression}")
            await asyncio.sleep(0.1)

    async def _centre(self, selector: str) -> dict[str, float]:
        """The viewport coordinates of the element's centre, scrolled into view."""
        box: dict[str, float] | None = await self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " if (!e) return null; e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return {x: r.left + r.width / 2, y: r.top + r.height / 2}; })()"
        )
        if box is None:
            raise BrowserError(f"nothing matches {selector}")
        return box

    async def click(self, selector: str) -> None:
        """A real left click at the centre of the first element `selector` matches."""
        box = await self._centre(selector)
        await self.click_at(box["x"], box["y"])

    async def click_at(self, x: float, y: float) -> None:
        """A real left click at (x, y), CSS pixels from the viewport's top left."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.send(
                "Input.dispatchMouseEvent",
                type=kind,
                x=x,
                y=y,
                button="left",
                buttons=0 if kind == "mouseMoved" else 1,
                clickCount=1,
            )

    async def hover_at(self, x: float, y: float) -> None:
        """Moves the mouse to (x, y), with no button down."""
        await self.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y, buttons=0)

    async def type(self, selector: str, text: str) -> None:
        """Focuses the field, clears it, and types `text` as keyboard input would."""
        await self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
            " e.focus(); e.value = ''; })()"
        )
        await self.send("Input.insertText", text=text)

    async def set_files(self, selector: str, paths: Sequence[Path]) -> None:
        """Chooses `paths` in the file input `selector` as the file dialog would: the page
        gets the input's change event."""
        root = await self.send("DOM.getDocument", depth=0)
        found = await self.send(
            "DOM.querySelector", nodeId=root["root"]["nodeId"], selector=selector
        )
        if not found.get("nodeId"):
            raise BrowserError(f"nothing matches {selector}")
        files = [str(path.resolve()) for path in paths]
        await self.send("DOM.setFileInputFiles", files=files, nodeId=found["nodeId"])

    async def drop_files(self, selector: str, paths: Sequence[Path]) -> None:
        """Drags `paths` from outside the browser and drops them at the centre of the first
        element `selector` matches, as a user drops files from their file manager."""
        box = await self._centre(selector)
        data = {"items": [], "files": [str(p.resolve()) for p in paths], "dragOperationsMask": 1}
        for kind in ("dragEnter", "dragOver", "drop"):
            await self.send("Input.dispatchDragEvent", type=kind, data=data, **box)

    async def screenshot(self, path: Path) -> Path:
        shot = await self.send("Page.captureScreenshot", format="png")
        await asyncio.to_thread(_write, path, base64.b64decode(shot["data"]))
        return path

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        await self._socket.close()


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


async def _devtools_port(profile: Path, process: asyncio.subprocess.Process) -> int:
    marker = profile / "DevToolsActivePort"
    for _ in range(300):
        if marker.exists() and marker.read_text().strip():
            return int(marker.read_text().split()[0])
        if process.returncode is not None:
            raise BrowserError(f"chromium exited with code {process.returncode}")
        await asyncio.sleep(0.1)
    raise BrowserError("chromium did not open its DevTools port in 30 s")


@contextlib.asynccontextmanager
async def chromium(profile: Path, log: Path) -> AsyncIterator[Page]:
    """A headless Chromium with a new profile in `profile`; its output goes to `log`."""
    await asyncio.to_thread(profile.mkdir, parents=True, exist_ok=True)
    with log.open("ab") as output:
        process = await asyncio.create_subprocess_exec(
            chromium_binary(),
            *FLAGS,
            f"--user-data-dir={profile}",
            "about:blank",
            stdout=output,
            stderr=output,
        )
    try:
        port = await _devtools_port(profile, process)
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as reply:
                targets = await reply.json()
            url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
            socket = await session.ws_connect(url, max_msg_size=64 * 1024 * 1024)
            page = Page(socket)
            for domain in ("Page", "Runtime", "Network"):
                await page.send(f"{domain}.enable")
            await page.send("Page.addScriptToEvaluateOnNewDocument", source=REPORT_CSP)
            try:
                yield page
            finally:
                await page.close()
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()
