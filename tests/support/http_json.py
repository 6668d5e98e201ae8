"""Calls to a running server's HTTP/JSON port as a plain client makes them: urllib for the
API, a bare socket where the test must choose every header byte itself (a forged Host)."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from typing import Any

from ragstream.cli import demo_data
from ragstream.cli.files import read_all


def call(address: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    """(HTTP status, JSON reply) of a GET (no body) or a JSON POST."""
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://{address}{path}", data, headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def publish(
    address: str, workspace: str, documents: dict[str, str], token: str | None = None
) -> None:
    """Publishes {doc id: content} and waits until every document is processed."""
    listed = [{"docId": d, "content": c} for d, c in documents.items()]
    status, reply = call(
        address, "/v1/documents", {"workspace": workspace, "documents": listed}, token
    )
    assert status == 200, reply
    ids = "&".join(f"docIds={d}" for d in documents)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status, reply = call(
            address, f"/v1/documents/status?workspace={workspace}&{ids}", token=token
        )
        states = [d["state"] for d in reply.get("documents", [])]
        if states == ["DOCUMENT_STATE_PROCESSED"] * len(documents):
            return
        time.sleep(0.2)
    raise TimeoutError(f"{list(documents)} not processed in time: {reply}")


def demo_documents(*names: str) -> dict[str, str]:
    """{doc id: content} of the named files of the demo corpus."""
    documents, _ = read_all([demo_data.CORPUS])
    return {d.doc_id: d.content for d in documents if d.doc_id in names}


def raw_request(address: str, head: str, body: bytes = b"") -> tuple[int, str]:
    """(status, whole response text) of one request whose head (request line and headers,
    without the final empty line) is sent exactly as given; the connection closes after."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"{head}\r\nConnection: close\r\n\r\n".encode() + body)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    text = received.decode("utf-8", errors="replace")
    return int(text.split(" ", 2)[1]), text
