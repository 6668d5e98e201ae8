"""The Elasticsearch search store: the shared contract on a real node, plus what only this
backend promises (model isolation by index, deterministic ids, write validation)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from elasticsearch import AsyncElasticsearch

from ragstream.common.models import Collection
from ragstream.common.storage.elastic import (
    ElasticSearchStore,
    IndexLayout,
    ModelFingerprint,
    ModelMismatchError,
)
from ragstream.common.storage.elastic.layout import alias_targets
from ragstream.common.storage.elastic.search import VectorSizeError
from ragstream.common.storage.protocols import SearchStore
from tests.contract.search_store_contract import (
    DIM,
    NO_FILTER,
    WS,
    SearchStoreContract,
    ids,
    record,
    unit,
)
from tests.support.elasticsearch import ElasticsearchNode, drop_prefix

pytestmark = pytest.mark.integration
MODEL = ModelFingerprint("test:contract", DIM)


async def empty(client: AsyncElasticsearch, names: str) -> None:
    """Deletes every document (this distribution has no delete-by-query; tests write few)."""
    await client.indices.refresh(index=names)
    found = await client.search(index=names, size=10_000, source=False)
    operations = [
        {"delete": {"_index": h["_index"], "_id": h["_id"]}} for h in found["hits"]["hits"]
    ]
    if operations:
        await client.bulk(operations=operations, refresh=True)


@pytest.fixture(scope="session")
def contract_indices(elasticsearch_node: ElasticsearchNode) -> Iterator[dict[Collection, str]]:
    """Indices made once for the whole contract suite (creating three per test would be most
    of its run time); each test starts from emptied ones."""
    prefix = f"t{uuid.uuid4().hex[:10]}"

    async def run(step: str) -> dict[Collection, str]:
        client = AsyncElasticsearch(elasticsearch_node.url, request_timeout=30)
        try:
            if step == "drop":
                await drop_prefix(client, prefix)
                return {}
            store = await ElasticSearchStore.open(client, IndexLayout(prefix), MODEL)
            return {collection: store.index(collection) for collection in Collection}
        finally:
            await client.close()

    yield asyncio.run(run("create"))
    asyncio.run(run("drop"))


class TestElasticSearchStore(SearchStoreContract):
    @pytest.fixture
    async def store(
        self, es_client: AsyncElasticsearch, contract_indices: dict[Collection, str]
    ) -> SearchStore:
        await empty(es_client, ",".join(contract_indices.values()))
        return ElasticSearchStore(es_client, contract_indices, MODEL)

    async def refresh(self, store: SearchStore) -> None:
        assert isinstance(store, ElasticSearchStore)
        await store.refresh()


async def test_a_different_model_is_a_clear_error_naming_the_rebuild(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    await ElasticSearchStore.open(es_client, layout, MODEL)
    again = await ElasticSearchStore.open(es_client, layout, MODEL)
    assert again.model == MODEL
    other = ModelFingerprint("test:other", DIM)
    with pytest.raises(ModelMismatchError, match=r"test:contract \(8-d\).*ragstream reindex"):
        await ElasticSearchStore.open(es_client, layout, other)


async def test_indices_carry_the_model_fingerprint_behind_aliases(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    await ElasticSearchStore.open(es_client, layout, MODEL)
    for collection in Collection:
        [index] = await alias_targets(es_client, layout.alias(collection.value))
        assert index == f"{layout.prefix}-{collection.value}-{MODEL.slug}-g1"


async def test_vectors_of_another_size_are_refused_before_anything_is_written(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    store = await ElasticSearchStore.open(es_client, layout, MODEL)
    bad = record("bad", vector=np.ones(4, dtype=np.float32))
    with pytest.raises(VectorSizeError, match=r"'bad' has a 4-d vector.*ragstream reindex"):
        await store.upsert(Collection.CHUNKS, [record("good"), bad])
    with pytest.raises(ValueError, match="NaN"):
        await store.upsert(Collection.CHUNKS, [record("nan", vector=np.full(DIM, np.nan))])
    await store.refresh()
    assert await store.count(Collection.CHUNKS, WS) == 0


async def test_replayed_writes_leave_one_copy_and_reads_need_no_refresh(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    store = await ElasticSearchStore.open(es_client, layout, MODEL)
    for _ in range(3):
        await store.upsert(Collection.CHUNKS, [record("r1", ["alpha"], vector=unit(0.0, 1.0))])
    [got] = await store.get(Collection.CHUNKS, WS, ["r1"])  # realtime GET
    assert got.terms == ("alpha",)
    await store.refresh()
    assert await store.count(Collection.CHUNKS, WS) == 1
    hits = await store.search_vector(Collection.CHUNKS, WS, unit(0.0, 1.0), NO_FILTER, 5)
    assert ids(hits) == ["r1"]


async def test_a_zero_vector_is_kept_but_never_a_dense_hit(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    store = await ElasticSearchStore.open(es_client, layout, MODEL)
    empty = record("empty", ["alpha"], vector=np.zeros(DIM, dtype=np.float32))
    await store.upsert(Collection.CHUNKS, [empty, record("r1", ["alpha"])])
    await store.refresh()
    [got] = await store.get(Collection.CHUNKS, WS, ["empty"])
    assert not np.any(got.vector)
    assert ids(await store.search_vector(Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 5)) == ["r1"]
    assert set(ids(await store.search_terms(Collection.CHUNKS, WS, ["alpha"], NO_FILTER, 5))) == {
        "empty",
        "r1",
    }
    zero_query = np.zeros(DIM, dtype=np.float32)
    assert await store.search_vector(Collection.CHUNKS, WS, zero_query, NO_FILTER, 5) == []


async def test_very_long_record_ids_still_round_trip(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    store = await ElasticSearchStore.open(es_client, layout, MODEL)
    long_id = "实体" * 200  # 1,200 bytes: over the 512-byte _id limit
    await store.upsert(Collection.RELATIONS, [record(long_id, ["x"])])
    [got] = await store.get(Collection.RELATIONS, WS, [long_id])
    assert got.id == long_id
