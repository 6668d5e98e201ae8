"""Workspace isolation on Elasticsearch: identical records of every collection in two
workspaces, and nothing of one ever answers a query in the other."""

from __future__ import annotations

import pytest
from elasticsearch import AsyncElasticsearch

from ragstream.common.models import Collection, SearchFilter, SearchRecord, relation_key
from ragstream.common.providers.embedding import hash_embed
from ragstream.common.storage.elastic import ElasticSearchStore, IndexLayout, ModelFingerprint
from ragstream.common.text.analyzer import analyze
from ragstream.query.search import SearchSpec, hybrid_search

pytestmark = pytest.mark.integration
DIM = 64
MODEL = ModelFingerprint("hash:64", DIM)
TEXTS = {
    Collection.CHUNKS: "Mira Okafor leads the Kestrel project at Northwind Labs.",
    Collection.ENTITIES: "Mira Okafor: engineer who leads the Kestrel project.",
    Collection.RELATIONS: "Mira Okafor leads Kestrel.",
    Collection.COMMUNITIES: "Mira Okafor and Kestrel: the Kestrel project's people.",
    Collection.NAMES: "Mira Okafor",
}
IDS = {
    Collection.CHUNKS: "chunk-1",
    Collection.ENTITIES: "mira okafor",
    Collection.RELATIONS: relation_key("mira okafor", "kestrel"),
    Collection.COMMUNITIES: "c0123456789ab",
    Collection.NAMES: "mira okafor",
}


def twin(collection: Collection, workspace: str) -> SearchRecord:
    text = TEXTS[collection]
    return SearchRecord(
        id=IDS[collection],
        workspace=workspace,
        text=text,
        terms=tuple(analyze(text)),
        vector=hash_embed([text], DIM)[0],
        doc_ids=("doc-1",),
        metadata={"source": "wiki"},
        timestamp=100.0,
    )


@pytest.mark.parametrize("collection", list(Collection))
async def test_identical_records_never_cross_workspaces(
    es_client: AsyncElasticsearch, layout: IndexLayout, collection: Collection
) -> None:
    store = await ElasticSearchStore.open(es_client, layout, MODEL)
    await store.upsert(collection, [twin(collection, "ws-a"), twin(collection, "ws-b")])
    await store.refresh()
    text = TEXTS[collection]
    vector = hash_embed([text], DIM)[0]
    spec = SearchSpec(
        "ws-a",
        analyze(text),
        vector,
        SearchFilter(metadata={"source": "wiki"}, doc_ids=frozenset({"doc-1"})),
        candidates=10,
        limit=10,
    )
    for found in (
        await store.search_terms(collection, "ws-a", spec.terms, spec.search_filter, 10),
        await store.search_vector(collection, "ws-a", vector, spec.search_filter, 10),
        await hybrid_search(store, collection, spec),
    ):
        assert [(h.record.id, h.record.workspace) for h in found] == [(IDS[collection], "ws-a")]
    [got] = await store.get(collection, "ws-a", [IDS[collection]])
    assert got.workspace == "ws-a"

    await store.delete(collection, "ws-a", [IDS[collection]])
    await store.refresh()
    assert await store.get(collection, "ws-a", [IDS[collection]]) == []
    assert await hybrid_search(store, collection, spec) == []
    assert await store.count(collection, "ws-b") == 1
    assert await store.count(collection, "ws-a") == 0
