"""The Elasticsearch mentions ledger and LLM cache.

The ledger keeps one document per chunk (`<workspace>/<chunk id>`) holding all of the chunk's
mentions and the keys they name. Replacing a chunk's mentions is then one atomic index
request, and `keys_of_chunks`/`delete_chunks` are realtime GETs by id, with no refresh.
`mentions_of` is a search on `keys`; stage 2 runs it right after stage 1 wrote the mentions
and published the keys, so writes use refresh "wait_for" by default: a write returns once it
is searchable, and the keys are published only after that.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any

from elasticsearch import NotFoundError

from ragstream.common.models import Mention, MentionKind
from ragstream.common.storage.elastic import codec
from ragstream.common.storage.elastic.aliased import AliasedStore
from ragstream.common.storage.elastic.bulk import bulk_write
from ragstream.common.storage.elastic.paging import all_hits

_FIELDS = tuple(field.name for field in dataclasses.fields(Mention))


def mention_source(mention: Mention) -> dict[str, Any]:
    values = {name: getattr(mention, name) for name in _FIELDS}
    values["kind"] = MentionKind(mention.kind).value
    return values


def mention_from(source: Mapping[str, Any]) -> Mention:
    values = {name: source[name] for name in _FIELDS}
    values["kind"] = MentionKind(values["kind"])
    return Mention(**values)


def _chunk_document(workspace: str, chunk_id: str, mentions: Sequence[Mention]) -> dict[str, Any]:
    by_key = {m.key: m for m in mentions}  # one mention per (chunk, key): the last one
    return {
        "workspace": workspace,
        "chunk_id": chunk_id,
        "keys": sorted(by_key),
        "mentions": [mention_source(m) for m in by_key.values()],
    }


class ElasticMentionStore(AliasedStore):
    """MentionStore over the `<prefix>-mentions` alias."""

    ROLE = "mentions"
    DEFAULT_REFRESH = "wait_for"

    async def replace_chunk_mentions(
        self, workspace: str, chunk_id: str, mentions: Sequence[Mention]
    ) -> None:
        await self.replace_mentions(workspace, {chunk_id: mentions})

    async def replace_mentions(
        self, workspace: str, by_chunk: Mapping[str, Sequence[Mention]]
    ) -> None:
        """One bulk write, so one refresh wait for all the chunks, not one each."""
        actions = [
            {
                "_op_type": "index",
                "_index": self._alias,
                "_id": codec.doc_id(workspace, chunk_id),
                "_source": _chunk_document(workspace, chunk_id, mentions),
            }
            for chunk_id, mentions in by_chunk.items()
        ]
        if actions:
            await bulk_write(self._client, actions, refresh=self._refresh)

    async def delete_chunks(self, workspace: str, chunk_ids: Sequence[str]) -> set[str]:
        keys = await self.keys_of_chunks(workspace, chunk_ids)
        actions = [
            {"_op_type": "delete", "_index": self._alias, "_id": codec.doc_id(workspace, c)}
            for c in dict.fromkeys(chunk_ids)
        ]
        if actions:
            await bulk_write(self._client, actions, refresh=self._refresh)
        return keys

    async def keys_of_chunks(self, workspace: str, chunk_ids: Sequence[str]) -> set[str]:
        unique = list(dict.fromkeys(chunk_ids))
        if not unique:
            return set()
        response = await self._client.mget(
            index=self._alias,
            ids=[codec.doc_id(workspace, c) for c in unique],
            source_includes=["workspace", "keys"],
        )
        return {
            key
            for doc in response["docs"]
            if doc.get("found") and doc["_source"]["workspace"] == workspace
            for key in doc["_source"]["keys"]
        }

    async def mentions_of(self, workspace: str, keys: Sequence[str]) -> dict[str, list[Mention]]:
        wanted = set(keys)
        if not wanted:
            return {}
        query = {
            "bool": {
                "filter": [
                    {"term": {"workspace": workspace}},
                    {"terms": {"keys": sorted(wanted)}},
                ]
            }
        }
        found: dict[str, list[Mention]] = {}
        async for hit in all_hits(self._client, self._alias, query, ["chunk_id"]):
            for source in hit["_source"]["mentions"]:
                if source["key"] in wanted:
                    found.setdefault(source["key"], []).append(mention_from(source))
        return {key: found[key] for key in sorted(found)}


class ElasticCacheStore(AliasedStore):
    """CacheStore over the `<prefix>-llm-cache` alias: realtime GET by key, no refresh."""

    ROLE = "llm-cache"

    async def get(self, key: str) -> str | None:
        try:
            found = await self._client.get(index=self._alias, id=_cache_id(key))
        except NotFoundError as error:
            if isinstance(error.body, dict) and error.body.get("found") is False:
                return None  # the key is not cached; a missing index is still an error
            raise
        value: str = found["_source"]["value"]
        return value

    async def put(self, key: str, value: str) -> None:
        await self._client.index(
            index=self._alias,
            id=_cache_id(key),
            document={"value": value, "created_at": time.time()},
        )


def _cache_id(key: str) -> str:
    return codec.doc_id("cache", key)
