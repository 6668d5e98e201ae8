"""The Elasticsearch community store against its contract, on a real node."""

from __future__ import annotations

import pytest
from elasticsearch import AsyncElasticsearch

from ragstream.common.storage.elastic import ElasticCommunityStore, IndexLayout
from ragstream.common.storage.protocols import CommunityStore
from tests.contract.community_store_contract import CommunityStoreContract

pytestmark = pytest.mark.integration


class TestElasticCommunityStore(CommunityStoreContract):
    @pytest.fixture
    async def store(self, es_client: AsyncElasticsearch, layout: IndexLayout) -> CommunityStore:
        return await ElasticCommunityStore.open(es_client, layout)
