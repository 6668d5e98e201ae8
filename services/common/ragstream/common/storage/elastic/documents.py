"""The Elasticsearch DocumentStore: one document per (workspace, doc_id), externally versioned.

Each put carries the document's upstream version as an external version (`external_gte`):
the same version may move through its states (pending, processing, processed), but a put
of an older version is refused by Elasticsearch, so a replayed old event can never bring
back what a newer one replaced. A refused put is a replay, not an error: it is dropped.

`get`/`get_many` are realtime GETs (they see every put at once); `list` and `matching` are
searches and see puts after the next refresh, which the indexer does not need: it reads its
own state by id.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from elasticsearch import ConflictError

from ragstream.common.models import DocState, DocumentRecord, SearchFilter
from ragstream.common.storage.elastic import codec
from ragstream.common.storage.elastic.aliased import AliasedStore
from ragstream.common.storage.elastic.paging import all_hits
from ragstream.common.storage.elastic.queries import filter_clauses

log = logging.getLogger(__name__)
MAX_PAGE = 10_000
"""Elasticsearch's default index.max_result_window: larger lists page with search_after."""


def to_source(record: DocumentRecord) -> dict[str, Any]:
    return {
        "workspace": record.workspace,
        "doc_id": record.doc_id,
        "version": int(record.version),
        "state": DocState(record.state).value,
        "content_hash": record.content_hash,
        "file_path": record.file_path,
        "metadata": dict(record.metadata),
        "metadata_kv": codec.metadata_pairs(record.metadata),
        "timestamp": None if record.timestamp is None else float(record.timestamp),
        "error": record.error,
        "chunk_ids": list(record.chunk_ids),
        "entity_count": int(record.entity_count),
        "relation_count": int(record.relation_count),
        "created_at": float(record.created_at),
        "updated_at": float(record.updated_at),
        "processing_ms": float(record.processing_ms),
    }


def from_source(source: Mapping[str, Any]) -> DocumentRecord:
    return DocumentRecord(
        workspace=source["workspace"],
        doc_id=source["doc_id"],
        version=source["version"],
        state=DocState(source["state"]),
        content_hash=source["content_hash"],
        file_path=source["file_path"],
        metadata=dict(source["metadata"]),
        timestamp=source.get("timestamp"),
        error=source["error"],
        chunk_ids=tuple(source["chunk_ids"]),
        entity_count=source["entity_count"],
        relation_count=source["relation_count"],
        created_at=source["created_at"],
        updated_at=source["updated_at"],
        processing_ms=source["processing_ms"],
    )


class ElasticDocumentStore(AliasedStore):
    """DocumentStore over the `<prefix>-documents` alias; create with `await ...open(...)`."""

    ROLE = "documents"
    DEFAULT_REFRESH = "false"

    async def get(self, workspace: str, doc_id: str) -> DocumentRecord | None:
        found = await self.get_many(workspace, [doc_id])
        return found[0] if found else None

    async def get_many(self, workspace: str, doc_ids: Sequence[str]) -> list[DocumentRecord]:
        unique = list(dict.fromkeys(doc_ids))
        if not unique:
            return []
        response = await self._client.mget(
            index=self._alias, ids=[codec.doc_id(workspace, d) for d in unique]
        )
        records = [from_source(doc["_source"]) for doc in response["docs"] if doc.get("found")]
        by_id = {r.doc_id: r for r in records if r.workspace == workspace}
        return [by_id[d] for d in unique if d in by_id]

    async def put(self, record: DocumentRecord) -> None:
        try:
            await self._client.index(
                index=self._alias,
                id=codec.doc_id(record.workspace, record.doc_id),
                document=to_source(record),
                version=int(record.version),
                version_type="external_gte",
                refresh=self._refresh,
            )
        except ConflictError:
            log.debug(
                "dropped put of %s/%s v%d: a newer version is stored",
                record.workspace,
                record.doc_id,
                record.version,
            )

    async def list(
        self, workspace: str, state: DocState | None, limit: int, after: str = ""
    ) -> list[DocumentRecord]:
        if limit <= 0:
            return []
        clauses: list[dict[str, Any]] = [{"term": {"workspace": workspace}}]
        if state is not None:
            clauses.append({"term": {"state": DocState(state).value}})
        if after:
            clauses.append({"range": {"doc_id": {"gt": after}}})
        query = {"bool": {"filter": clauses}}
        records: list[DocumentRecord] = []
        pages = all_hits(
            self._client, self._alias, query, ["doc_id"], page_size=min(limit, MAX_PAGE)
        )
        async with contextlib.aclosing(pages):
            async for hit in pages:
                records.append(from_source(hit["_source"]))
                if len(records) == limit:
                    break
        return records

    async def matching(self, workspace: str, search_filter: SearchFilter) -> set[str]:
        query = {
            "bool": {
                "filter": filter_clauses(workspace, search_filter, doc_field="doc_id"),
                "must_not": [{"term": {"state": DocState.DELETED.value}}],
            }
        }
        hits = all_hits(self._client, self._alias, query, ["doc_id"], source=False)
        return {hit["sort"][0] async for hit in hits}
