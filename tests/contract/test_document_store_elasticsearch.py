"""The Elasticsearch document store: the shared contract on a real node, plus external
versioning (a replayed older put never replaces a newer record)."""

from __future__ import annotations

import pytest
from elasticsearch import AsyncElasticsearch

from ragstream.common.models import DocState, SearchFilter
from ragstream.common.storage.elastic import ElasticDocumentStore, IndexLayout
from ragstream.common.storage.protocols import DocumentStore
from tests.contract.document_store_contract import WS, DocumentStoreContract, document

pytestmark = pytest.mark.integration


class TestElasticDocumentStore(DocumentStoreContract):
    @pytest.fixture
    async def store(self, es_client: AsyncElasticsearch, layout: IndexLayout) -> DocumentStore:
        return await ElasticDocumentStore.open(es_client, layout)

    async def refresh(self, store: DocumentStore) -> None:
        assert isinstance(store, ElasticDocumentStore)
        await store.refresh()


async def test_a_replayed_older_version_never_replaces_a_newer_one(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    store = await ElasticDocumentStore.open(es_client, layout)
    await store.put(document("d1", DocState.PROCESSING, version=3))
    await store.put(document("d1", DocState.PROCESSED, version=3))  # same version: a new state
    await store.put(document("d1", DocState.PROCESSED, version=2, metadata={"old": "yes"}))
    got = await store.get(WS, "d1")  # realtime: no refresh needed
    assert got is not None and (got.version, got.state, dict(got.metadata)) == (
        3,
        DocState.PROCESSED,
        {},
    )
    await store.put(document("d1", DocState.DELETED, version=4))
    got = await store.get(WS, "d1")
    assert got is not None and got.state == DocState.DELETED


async def test_list_and_matching_see_every_document_after_a_refresh(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    store = await ElasticDocumentStore.open(es_client, layout)
    for i in range(30):
        await store.put(document(f"d{i:03d}"))
    await store.refresh()
    listed = await store.list(WS, None, 25, after="d002")
    assert [r.doc_id for r in listed] == [f"d{i:03d}" for i in range(3, 28)]
    assert len(await store.matching(WS, SearchFilter())) == 30
