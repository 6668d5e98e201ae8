"""The Elasticsearch mentions ledger and LLM cache against their contracts, on a real node."""

from __future__ import annotations

import pytest
from elasticsearch import AsyncElasticsearch

from ragstream.common.storage.elastic import ElasticCacheStore, ElasticMentionStore, IndexLayout
from ragstream.common.storage.protocols import CacheStore, MentionStore
from tests.contract.mention_store_contract import (
    WS,
    CacheStoreContract,
    MentionStoreContract,
    entity,
)

pytestmark = pytest.mark.integration


class TestElasticMentionStore(MentionStoreContract):
    @pytest.fixture
    async def store(self, es_client: AsyncElasticsearch, layout: IndexLayout) -> MentionStore:
        return await ElasticMentionStore.open(es_client, layout)


class TestElasticCacheStore(CacheStoreContract):
    @pytest.fixture
    async def store(self, es_client: AsyncElasticsearch, layout: IndexLayout) -> CacheStore:
        return await ElasticCacheStore.open(es_client, layout)


async def test_mentions_are_searchable_when_the_write_returns(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    """Stage 2 reads a key's mentions right after stage 1 wrote them: no refresh in between."""
    store = await ElasticMentionStore.open(es_client, layout)
    await store.replace_chunk_mentions(WS, "c1", [entity("c1", "a")])
    assert [m.chunk_id for m in (await store.mentions_of(WS, ["a"]))["a"]] == ["c1"]
    await store.replace_chunk_mentions(WS, "c1", [entity("c1", "b")])
    assert await store.mentions_of(WS, ["a"]) == {}
