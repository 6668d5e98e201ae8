"""Bulk writes retry rejections (429) with backoff and report every other failure.

A rejection needs a node whose write queue is full, which a test cannot arrange reliably on
a real node; a loopback HTTP server answering `_bulk` as Elasticsearch does (product header,
per-item statuses) stands in, so the client's real bulk helper and our retry settings run.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from elasticsearch import AsyncElasticsearch

from ragstream.common.storage.elastic.bulk import BulkWriteError, bulk_write

HEADERS = {"X-Elastic-Product": "Elasticsearch", "Content-Type": "application/json"}


class BulkServer:
    """Answers each `_bulk` item with the next status scripted for its id (then 201)."""

    def __init__(self, script: dict[str, list[int]]) -> None:
        self.script = script
        self.requests = 0

    async def bulk(self, request: web.Request) -> web.Response:
        self.requests += 1
        lines = [json.loads(line) for line in (await request.text()).splitlines() if line]
        items = []
        for line in lines:
            op, meta = next(iter(line.items()))
            if op not in ("index", "delete"):
                continue  # a document body
            statuses = self.script.get(meta["_id"], [])
            status = statuses.pop(0) if statuses else 201
            item = {"_index": meta["_index"], "_id": meta["_id"], "status": status}
            if status >= 300:
                item["error"] = {"type": "x", "reason": f"scripted {status}"}
            items.append({op: item})
        errors = any(next(iter(i.values()))["status"] >= 300 for i in items)
        body = {"took": 1, "errors": errors, "items": items}
        return web.Response(text=json.dumps(body), headers=HEADERS)


@pytest.fixture
async def server() -> AsyncIterator[tuple[BulkServer, AsyncElasticsearch]]:
    fake = BulkServer({"a": [429, 429], "gone": [404], "bad": [400]})
    app = web.Application()
    app.router.add_route("*", "/_bulk", fake.bulk)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    client = AsyncElasticsearch(f"http://127.0.0.1:{port}")
    try:
        yield fake, client
    finally:
        await client.close()
        await runner.cleanup()


def index(doc_id: str) -> dict[str, object]:
    return {"_op_type": "index", "_index": "i", "_id": doc_id, "_source": {"v": 1}}


async def test_rejections_are_retried_until_they_succeed(
    server: tuple[BulkServer, AsyncElasticsearch],
) -> None:
    fake, client = server
    assert await bulk_write(client, [index("a"), index("b")], refresh="false") == 2
    assert fake.requests == 3  # the first try and two retries of the rejected item only


async def test_other_failures_are_reported_and_missing_deletes_ignored(
    server: tuple[BulkServer, AsyncElasticsearch],
) -> None:
    _, client = server
    delete = {"_op_type": "delete", "_index": "i", "_id": "gone"}
    assert await bulk_write(client, [delete], refresh="false") == 1
    with pytest.raises(BulkWriteError, match=r"1 of 2 bulk actions failed: index i/bad: 400"):
        await bulk_write(client, [index("ok"), index("bad")], refresh="false")
