"""The Elasticsearch community store over the `<prefix>-community-records` alias
(`<prefix>-communities` is the reports' search collection).

One document per community (`<workspace>/<id>`). Stage 2 writes a batch's changes with one
bulk request and reads its own writes back by search (`list`, `of_entities`), so writes use
refresh "wait_for": a write returns once it is searchable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragstream.common.communities import CommunityRecord, report_fields, report_of
from ragstream.common.storage.elastic import codec
from ragstream.common.storage.elastic.aliased import AliasedStore
from ragstream.common.storage.elastic.bulk import bulk_write
from ragstream.common.storage.elastic.paging import all_hits


def _source(c: CommunityRecord) -> dict[str, Any]:
    return {
        "workspace": c.workspace, "id": c.id, "level": c.level, "parent": c.parent,
        "members": list(c.members), "report": report_fields(c.report),
    }  # fmt: skip


def _record(source: Mapping[str, Any]) -> CommunityRecord:
    return CommunityRecord(
        source["workspace"], source["id"], int(source["level"]), source["parent"],
        tuple(source["members"]), report_of(source["report"]),
    )  # fmt: skip


class ElasticCommunityStore(AliasedStore):
    ROLE = "community-records"
    DEFAULT_REFRESH = "wait_for"

    async def apply(
        self, workspace: str, upserts: Sequence[CommunityRecord], deletes: Sequence[str]
    ) -> None:
        if any(c.workspace != workspace for c in upserts):
            raise ValueError("every community must belong to the given workspace")
        kept = {c.id for c in upserts}
        actions: list[dict[str, Any]] = [
            {"_op_type": "delete", "_index": self._alias, "_id": codec.doc_id(workspace, i)}
            for i in dict.fromkeys(deletes)
            if i not in kept
        ]
        actions += [
            {"_op_type": "index", "_index": self._alias, "_id": codec.doc_id(workspace, c.id),
             "_source": _source(c)}
            for c in upserts
        ]  # fmt: skip
        if actions:
            await bulk_write(self._client, actions, refresh=self._refresh)

    async def get(self, workspace: str, ids: Sequence[str]) -> list[CommunityRecord]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return []
        response = await self._client.mget(
            index=self._alias, ids=[codec.doc_id(workspace, i) for i in unique]
        )
        return [
            _record(doc["_source"])
            for doc in response["docs"]
            if doc.get("found") and doc["_source"]["workspace"] == workspace
        ]

    async def of_entities(self, workspace: str, keys: Sequence[str]) -> dict[str, list[str]]:
        wanted = set(keys)
        if not wanted:
            return {}
        query = {
            "bool": {
                "filter": [
                    {"term": {"workspace": workspace}},
                    {"terms": {"members": sorted(wanted)}},
                ]
            }
        }
        found: dict[str, list[str]] = {}
        fields = ["members", "id"]
        async for hit in all_hits(self._client, self._alias, query, ["level", "id"]):
            source = {name: hit["_source"][name] for name in fields}
            for key in wanted.intersection(source["members"]):
                found.setdefault(key, []).append(source["id"])
        return {key: found[key] for key in sorted(found)}

    async def list(self, workspace: str, level: int | None = None) -> list[CommunityRecord]:
        wanted: list[dict[str, Any]] = [{"term": {"workspace": workspace}}]
        if level is not None:
            wanted.append({"term": {"level": level}})
        query = {"bool": {"filter": wanted}}
        return [
            _record(hit["_source"])
            async for hit in all_hits(self._client, self._alias, query, ["level", "id"])
        ]
