"""The whole embedded indexing pipeline in-process: publish events, run both stages until
idle, and dump every store for comparisons."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from ragstream.common.bus.progress import indexing_progress
from ragstream.common.bus.protocols import OutgoingRecord
from ragstream.common.bus.sqlite_log import SqliteEventLog
from ragstream.common.config import Settings, load_settings
from ragstream.common.events import DocumentChange, encode
from ragstream.common.models import Collection, split_relation_key
from ragstream.common.registry import Backends, open_backends
from ragstream.common.storage.sqlite.db import Database
from ragstream.indexer.main import run_stages


def embedded_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Embedded backends in data_dir; the hashed embedder unless `embedding` is overridden."""
    overrides.setdefault("embedding", {"provider": "hash", "dimensions": 64})
    return load_settings(None, data_dir=data_dir, **overrides)


class Pipeline:
    """Both indexing stages running on the embedded bus of one data directory."""

    def __init__(self, backends: Backends, settings: Settings) -> None:
        self.backends = backends
        self.settings = settings

    @property
    def log(self) -> SqliteEventLog:
        publisher = self.backends.bus.publisher
        assert isinstance(publisher, SqliteEventLog)
        return publisher

    async def publish(self, changes: Sequence[DocumentChange | OutgoingRecord]) -> None:
        records = [c if isinstance(c, OutgoingRecord) else encode(c) for c in changes]
        await self.log.publish(self.backends.topics.documents, records)

    async def idle(self, timeout_s: float = 120) -> None:
        """Returns once both stages have committed everything published so far."""
        backends, group = self.backends, self.settings.bus.group_id
        async with asyncio.timeout(timeout_s):
            while not (await indexing_progress(backends.bus, backends.topics, group)).current:  # noqa: ASYNC110
                await asyncio.sleep(0.05)

    async def refresh(self) -> None:
        """Makes every write searchable: Elasticsearch searches see refreshed writes only
        (the embedded stores have nothing to refresh)."""
        stores = self.backends.stores
        for store in (stores.search, stores.docs):
            refresh = getattr(store, "refresh", None)
            if refresh is not None:
                await refresh()

    async def dump(self, workspace: str) -> dict[str, Any]:
        """Every store's content for the workspace, in a comparable form."""
        stores = self.backends.stores
        out: dict[str, Any] = {}
        for collection in Collection:
            ids = await _ids(self.settings.data_dir, collection, workspace)
            records = await stores.search.get(collection, workspace, ids)
            out[collection.value] = {
                r.id: (r.text, r.terms, [round(float(x), 5) for x in r.vector], r.doc_ids,
                       dict(r.metadata), r.timestamp, dict(r.attrs))
                for r in records
            }  # fmt: skip
        entity_ids = list(out["entities"])
        relation_ids = list(out["relations"])
        out["nodes"] = await stores.graph.get_nodes(workspace, entity_ids)
        out["edges"] = await stores.graph.get_edges(
            workspace, [split_relation_key(k) for k in relation_ids]
        )
        mentions = await stores.mentions.mentions_of(workspace, entity_ids + relation_ids)
        out["mentions"] = {k: sorted(v, key=lambda m: m.chunk_id) for k, v in mentions.items()}
        docs = await stores.docs.list(workspace, None, 100_000)
        out["documents"] = {
            d.doc_id: (d.version, d.state, d.content_hash, d.chunk_ids, d.entity_count,
                       d.relation_count, d.error)
            for d in docs
        }  # fmt: skip
        return out


async def _ids(data_dir: Path, collection: Collection, workspace: str) -> list[str]:
    def read(conn: sqlite3.Connection) -> list[str]:
        rows = conn.execute(
            f"SELECT id FROM search_{collection.value} WHERE workspace = ? ORDER BY id",
            (workspace,),
        )
        return [row[0] for row in rows]

    async with await Database.open(data_dir) as db:
        return await db.read(read)


@contextlib.asynccontextmanager
async def running_pipeline(settings: Settings) -> AsyncIterator[Pipeline]:
    async with open_backends(settings) as backends:
        pipeline = Pipeline(backends, settings)
        stop = asyncio.Event()
        task = asyncio.create_task(run_stages(settings, backends, stop))
        try:
            yield pipeline
        finally:
            stop.set()
            await asyncio.wait_for(task, 60)
