"""`ragstream reindex` on a real node: a rebuild for another embedding model while queries
run. No query fails; at the end the aliases (and every store opened afterwards) answer from
the new indices; the old model is refused at startup with the rebuild command named; a
running query process of the indices' model follows a rebuild within seconds."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import grpc
import numpy as np
import pytest
from elasticsearch import AsyncElasticsearch

from ragstream.cli.reindex import reembed, run_reindex
from ragstream.common.config import Settings
from ragstream.common.models import Collection, SearchFilter, SearchRecord
from ragstream.common.providers.embedding import HashEmbedder, hash_embed
from ragstream.common.storage.elastic import (
    ElasticSearchStore,
    IndexLayout,
    ModelFingerprint,
    ModelMismatchError,
)
from ragstream.common.storage.elastic.bulk import BulkWriteError
from ragstream.common.storage.elastic.layout import alias_targets
from ragstream.common.storage.elastic.reindex import VectorIndices
from ragstream.common.text.analyzer import analyze
from ragstream.indexer.stages.merge_records import embedding_text
from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.support.elasticsearch import ElasticsearchNode
from tests.support.server import RagstreamProcess

pytestmark = pytest.mark.integration
OLD, NEW = HashEmbedder(32), HashEmbedder(48)
WS = "ws-r"
CHUNKS = 600


def records(collection: Collection, count: int, dim: int) -> list[SearchRecord]:
    texts = [
        f"record {i} of {collection.value} about topic{i % 7} and subject{i}" for i in range(count)
    ]
    vectors = hash_embed(texts, dim)
    return [
        SearchRecord(
            id=f"{collection.value}-{i}",
            workspace=WS,
            text=text,
            terms=tuple(analyze(text)),
            vector=vectors[i],
            doc_ids=(f"doc-{i}",),
            attrs={"source": "a", "target": "b", "keywords": "k", "description": text}
            if collection is Collection.RELATIONS
            else {},
        )
        for i, text in enumerate(texts)
    ]


async def seed(store: ElasticSearchStore) -> None:
    await store.upsert(Collection.CHUNKS, records(Collection.CHUNKS, CHUNKS, 32))
    await store.upsert(Collection.ENTITIES, records(Collection.ENTITIES, 20, 32))
    await store.upsert(Collection.RELATIONS, records(Collection.RELATIONS, 20, 32))
    await store.refresh()


async def query_until(
    stop: asyncio.Event, client: AsyncElasticsearch, store: ElasticSearchStore, alias: str
) -> Counter[str]:
    """Queries as a running service would (its own store) and as a newly started one would
    (the alias), counting answers by index; any failure propagates."""
    seen: Counter[str] = Counter()
    query = "record 5 of chunks about topic5 and subject5"
    while not stop.is_set():
        terms = await store.search_terms(Collection.CHUNKS, WS, analyze(query), SearchFilter(), 5)
        dense = await store.search_vector(
            Collection.CHUNKS, WS, hash_embed([query], 32)[0], SearchFilter(), 5
        )
        assert terms[0].record.id == dense[0].record.id == "chunks-5"
        response = await client.search(index=alias, query={"term": {"terms": "subject5"}}, size=1)
        [hit] = response["hits"]["hits"]
        seen[hit["_index"]] += 1
        await asyncio.sleep(0.02)
    return seen


async def test_reindex_while_queries_run(
    es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    running = await ElasticSearchStore.open(es_client, layout, ModelFingerprint.of(OLD))
    await seed(running)
    stop = asyncio.Event()
    alias = layout.alias("chunks")
    queries = asyncio.create_task(query_until(stop, es_client, running, alias))
    await asyncio.sleep(0.3)
    result = await reembed(VectorIndices(es_client, layout), NEW)
    await asyncio.sleep(0.3)
    stop.set()
    seen = await queries  # raises if any query failed
    assert seen[result.old[Collection.CHUNKS]] > 0 and seen[result.new[Collection.CHUNKS]] > 0
    assert result.copied == {
        Collection.CHUNKS: CHUNKS,
        Collection.ENTITIES: 20,
        Collection.RELATIONS: 20,
        Collection.COMMUNITIES: 0,
        Collection.NAMES: 0,
    }
    for collection in Collection:
        assert await alias_targets(es_client, layout.alias(collection.value)) == [
            result.new[collection]
        ]

    fresh = await ElasticSearchStore.open(es_client, layout, ModelFingerprint.of(NEW))
    [chunk] = await fresh.get(Collection.CHUNKS, WS, ["chunks-5"])
    np.testing.assert_allclose(chunk.vector, hash_embed([chunk.text], 48)[0], atol=1e-6)
    [relation] = await fresh.get(Collection.RELATIONS, WS, ["relations-3"])
    expected = hash_embed([embedding_text(Collection.RELATIONS, relation)], 48)[0]
    np.testing.assert_allclose(relation.vector, expected, atol=1e-6)
    hits = await fresh.search_vector(
        Collection.CHUNKS, WS, hash_embed([chunk.text], 48)[0], SearchFilter(), 3
    )
    assert hits[0].record.id == "chunks-5"

    with pytest.raises(ModelMismatchError, match="ragstream reindex"):
        await ElasticSearchStore.open(es_client, layout, ModelFingerprint.of(OLD))
    with pytest.raises(BulkWriteError, match=r"write-blocked.*ragstream reindex"):
        await running.upsert(Collection.CHUNKS, records(Collection.CHUNKS, 1, 32))


async def test_reindex_command_rebuilds_and_cleans_up(
    elasticsearch_node: ElasticsearchNode, es_client: AsyncElasticsearch, layout: IndexLayout
) -> None:
    old = await ElasticSearchStore.open(es_client, layout, ModelFingerprint.of(OLD))
    await old.upsert(Collection.CHUNKS, records(Collection.CHUNKS, 10, 32))
    settings = Settings(
        storage={"search": "elasticsearch"},
        embedding={"provider": "hash", "dimensions": 48},
        elasticsearch={"hosts": [elasticsearch_node.url], "index_prefix": layout.prefix},
    )
    assert await run_reindex(settings, delete_old=False, cleanup=False) == 0
    before = await es_client.indices.get(index=layout.pattern("chunks"))
    assert len(before.body) == 2
    assert await run_reindex(settings, delete_old=False, cleanup=True) == 0
    after = await es_client.indices.get(index=layout.pattern("chunks"))
    assert list(after.body) == await alias_targets(es_client, layout.alias("chunks"))
    new = await ElasticSearchStore.open(es_client, layout, ModelFingerprint.of(NEW))
    assert await new.count(Collection.CHUNKS, WS) == 10
    embedded = Settings(embedding={"provider": "hash"})
    assert await run_reindex(embedded, delete_old=False, cleanup=False) == 2


def _retrieve_ids(address: str, text: str) -> list[str]:
    with grpc.insecure_channel(address) as channel:
        request = query_pb2.RetrieveRequest(
            workspace=WS, query=text, params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE)
        )
        reply = query_pb2_grpc.QueryServiceStub(channel).Retrieve(request, timeout=10)
    return [chunk.chunk_id for chunk in reply.context.chunks]


async def test_a_running_query_process_answers_from_the_rebuilt_indices_within_seconds(
    elasticsearch_node: ElasticsearchNode,
    es_client: AsyncElasticsearch,
    layout: IndexLayout,
    tmp_path: Path,
) -> None:
    """`ragstream reindex` (same model: e.g. new mappings) under a running `serve`: a chunk
    written only to the new indices is in its answers within 10 s, with no restart."""
    await seed(await ElasticSearchStore.open(es_client, layout, ModelFingerprint.of(OLD)))
    env = {
        **os.environ,
        "RAGSTREAM_STORAGE__SEARCH": "elasticsearch",
        "RAGSTREAM_ELASTICSEARCH__HOSTS": json.dumps([elasticsearch_node.url]),
        "RAGSTREAM_ELASTICSEARCH__INDEX_PREFIX": layout.prefix,
        "RAGSTREAM_EMBEDDING__PROVIDER": "hash",
        "RAGSTREAM_EMBEDDING__DIMENSIONS": str(OLD.dimensions),
    }
    args = ("serve", "--no-indexer", "--data-dir", str(tmp_path / "data"), "--listen")
    server = RagstreamProcess(env, tmp_path / "serve.log", *args)
    await asyncio.to_thread(server.start)  # it runs an event loop of its own
    try:
        assert (await asyncio.to_thread(_retrieve_ids, server.address, "subject5"))[0] == "chunks-5"
        result = await reembed(VectorIndices(es_client, layout), OLD)
        switched = time.monotonic()
        rebuilt = await ElasticSearchStore.open(es_client, layout, ModelFingerprint.of(OLD))
        assert rebuilt.index(Collection.CHUNKS) == result.new[Collection.CHUNKS]
        marker = records(Collection.CHUNKS, 1, OLD.dimensions)[0]
        text = "a chunk only the rebuilt index holds: zebraquartz"
        vector = hash_embed([text], OLD.dimensions)[0]
        await rebuilt.upsert(
            Collection.CHUNKS,
            [replace(marker, id="marker", text=text, terms=tuple(analyze(text)), vector=vector)],
        )
        await rebuilt.refresh()
        while "marker" not in await asyncio.to_thread(_retrieve_ids, server.address, "zebraquartz"):
            assert time.monotonic() - switched < 10, server.log()
            await asyncio.sleep(0.2)
        assert "aliases moved" in server.log()
    finally:
        server.stop()
