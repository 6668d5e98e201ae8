"""The MentionStore and CacheStore contracts: backends subclass and provide `store`.

A subclass defines a `store` fixture yielding a fresh, empty store, and overrides
`refresh` if writes become readable only after one (Elasticsearch).
"""

from __future__ import annotations

import asyncio

from ragstream.common.models import Mention, MentionKind, relation_key
from ragstream.common.storage.protocols import CacheStore, MentionStore

WS = "ws-a"


def entity(
    chunk: str, key: str, description: str = "", *, doc: str = "d1", ws: str = WS
) -> Mention:
    return Mention(
        workspace=ws, chunk_id=chunk, doc_id=doc, kind=MentionKind.ENTITY, key=key,
        name=key.title(), type="person", description=description or f"{key} in {chunk}",
        file_path=f"{doc}.md",
    )  # fmt: skip


def relation(chunk: str, a: str, b: str, *, doc: str = "d1", weight: float = 1.0) -> Mention:
    source, target = sorted((a, b))
    return Mention(
        workspace=WS, chunk_id=chunk, doc_id=doc, kind=MentionKind.RELATION,
        key=relation_key(a, b), source=source, target=target, keywords="works with, leads",
        description=f"{a} and {b}", weight=weight,
    )  # fmt: skip


class MentionStoreContract:
    async def refresh(self, store: MentionStore) -> None:
        """Makes the writes so far visible to reads; nothing to do for most backends."""

    async def test_mentions_round_trip_every_field(self, store: MentionStore) -> None:
        written = [
            entity("c1", "mira okafor", 'She said "hi" \\ 你好\nline'),
            relation("c1", "b", "a", weight=2.5),
        ]
        await store.replace_chunk_mentions(WS, "c1", written)
        await self.refresh(store)
        found = await store.mentions_of(WS, ["mira okafor", relation_key("a", "b"), "unknown"])
        assert found == {"mira okafor": [written[0]], relation_key("a", "b"): [written[1]]}

    async def test_replace_drops_what_the_chunk_no_longer_says(self, store: MentionStore) -> None:
        await store.replace_chunk_mentions(WS, "c1", [entity("c1", "a"), entity("c1", "b")])
        await store.replace_chunk_mentions(WS, "c1", [entity("c1", "b", "new")])
        await self.refresh(store)
        found = await store.mentions_of(WS, ["a", "b"])
        assert list(found) == ["b"] and found["b"][0].description == "new"

    async def test_a_batch_replaces_each_chunks_mentions_as_one_call_would(
        self, store: MentionStore
    ) -> None:
        await store.replace_chunk_mentions(WS, "c1", [entity("c1", "a"), entity("c1", "b")])
        batch = {f"c{i}": [entity(f"c{i}", "b", f"b{i}"), entity(f"c{i}", "c")] for i in (1, 2, 3)}
        await store.replace_mentions(WS, {**batch, "c4": []})
        await self.refresh(store)
        found = await store.mentions_of(WS, ["a", "b", "c"])
        assert list(found) == ["b", "c"]
        assert [m.description for m in found["b"]] == ["b1", "b2", "b3"]
        assert await store.keys_of_chunks(WS, ["c1", "c4"]) == {"b", "c"}

    async def test_mentions_of_gathers_every_chunk_in_chunk_order(
        self, store: MentionStore
    ) -> None:
        await store.replace_chunk_mentions(WS, "c2", [entity("c2", "a", doc="d2")])
        await store.replace_chunk_mentions(WS, "c1", [entity("c1", "a")])
        await self.refresh(store)
        assert [m.chunk_id for m in (await store.mentions_of(WS, ["a"]))["a"]] == ["c1", "c2"]

    async def test_delete_chunks_returns_touched_keys(self, store: MentionStore) -> None:
        await store.replace_chunk_mentions(WS, "c1", [entity("c1", "a"), relation("c1", "a", "b")])
        await store.replace_chunk_mentions(WS, "c2", [entity("c2", "a"), entity("c2", "c")])
        await self.refresh(store)
        assert await store.keys_of_chunks(WS, ["c1"]) == {"a", relation_key("a", "b")}
        touched = await store.delete_chunks(WS, ["c1", "nope"])
        await self.refresh(store)
        assert touched == {"a", relation_key("a", "b")}
        found = await store.mentions_of(WS, ["a", relation_key("a", "b"), "c"])
        assert [m.chunk_id for m in found["a"]] == ["c2"]
        assert relation_key("a", "b") not in found and "c" in found
        assert await store.delete_chunks(WS, []) == set()

    async def test_workspaces_are_isolated(self, store: MentionStore) -> None:
        await store.replace_chunk_mentions(WS, "c1", [entity("c1", "a")])
        await store.replace_chunk_mentions("ws-b", "c1", [entity("c1", "a", ws="ws-b")])
        await store.delete_chunks("ws-b", ["c1"])
        await self.refresh(store)
        assert len((await store.mentions_of(WS, ["a"]))["a"]) == 1
        assert await store.mentions_of("ws-b", ["a"]) == {}


class CacheStoreContract:
    async def test_get_put_overwrite(self, store: CacheStore) -> None:
        assert await store.get("k") is None
        await store.put("k", "value 值 \n")
        assert await store.get("k") == "value 值 \n"
        await store.put("k", "second")
        assert await store.get("k") == "second"

    async def test_concurrent_puts_each_return_once_readable(self, store: CacheStore) -> None:
        async def put_then_get(i: int) -> str | None:
            await store.put(f"k{i}", f"v{i}")
            return await store.get(f"k{i}")

        got = await asyncio.gather(*(put_then_get(i) for i in range(60)))
        assert got == [f"v{i}" for i in range(60)]
