"""The test node supports what the Elasticsearch search store relies on: int8_hnsw dense
vectors, kNN with a filter inside the knn clause (pre-filtering, so a closer vector of another
workspace cannot take a slot), and BM25 on a text field."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from elasticsearch import AsyncElasticsearch, NotFoundError

from tests.support.elasticsearch import ElasticsearchNode, unique_index

pytestmark = pytest.mark.integration

MAPPINGS: dict[str, Any] = {
    "dynamic": "strict",
    "properties": {
        "embedding": {
            "type": "dense_vector",
            "dims": 4,
            "index": True,
            "similarity": "cosine",
            "index_options": {"type": "int8_hnsw"},
        },
        "content": {"type": "text", "analyzer": "standard"},
        "workspace": {"type": "keyword"},
    },
}

DOCS: dict[str, dict[str, Any]] = {
    # The nearest vector to the query overall, but in another workspace.
    "other-near": {
        "embedding": [1.0, 0.0, 0.0, 0.0],
        "content": "kafka consumer groups",
        "workspace": "w2",
    },
    "near": {
        "embedding": [0.9, 0.3, 0.0, 0.0],
        "content": "graph retrieval over entities and relations",
        "workspace": "w1",
    },
    "far": {
        "embedding": [0.0, 0.0, 1.0, 0.2],
        "content": "the graph of the graph: entities, graph relations",
        "workspace": "w1",
    },
    "unrelated": {
        "embedding": [0.0, 1.0, 0.0, 0.0],
        "content": "streaming ingestion with offsets",
        "workspace": "w1",
    },
}


@pytest.fixture
async def client(elasticsearch_node: ElasticsearchNode) -> AsyncIterator[AsyncElasticsearch]:
    es = AsyncElasticsearch(elasticsearch_node.url, request_timeout=30)
    try:
        yield es
    finally:
        await es.close()


@pytest.fixture
async def index(client: AsyncElasticsearch) -> AsyncIterator[str]:
    name = unique_index("smoke")
    await client.indices.create(index=name, mappings=MAPPINGS, settings={"number_of_replicas": 0})
    operations: list[dict[str, Any]] = []
    for doc_id, doc in DOCS.items():
        operations += [{"index": {"_index": name, "_id": doc_id}}, doc]
    result = await client.bulk(operations=operations, refresh=True)
    assert not result["errors"], result
    try:
        yield name
    finally:
        await client.indices.delete(index=name)


async def test_cluster_is_a_healthy_single_node(client: AsyncElasticsearch) -> None:
    health = await client.cluster.health(wait_for_status="yellow", timeout="10s")
    assert health["number_of_nodes"] == 1
    assert health["status"] in ("yellow", "green")


async def test_mapping_keeps_int8_hnsw(client: AsyncElasticsearch, index: str) -> None:
    mapping = await client.indices.get_mapping(index=index)
    embedding = mapping[index]["mappings"]["properties"]["embedding"]
    assert embedding["index_options"]["type"] == "int8_hnsw"
    assert embedding["similarity"] == "cosine"


async def test_knn_filter_inside_knn_clause(client: AsyncElasticsearch, index: str) -> None:
    knn = {
        "field": "embedding",
        "query_vector": [1.0, 0.0, 0.0, 0.0],
        "k": 2,
        "num_candidates": 10,
        "filter": {"term": {"workspace": "w1"}},
    }
    response = await client.search(index=index, knn=knn, source=False)
    ids = [hit["_id"] for hit in response["hits"]["hits"]]
    # k=2 within w1: "other-near" (closest overall, w2) must not take a slot.
    assert ids == ["near", "unrelated"]

    unfiltered = await client.search(index=index, knn={**knn, "filter": []}, source=False)
    assert unfiltered["hits"]["hits"][0]["_id"] == "other-near"


async def test_bm25_match_ranks_by_term_frequency(client: AsyncElasticsearch, index: str) -> None:
    response = await client.search(
        index=index,
        query={
            "bool": {
                "must": {"match": {"content": "graph"}},
                "filter": {"term": {"workspace": "w1"}},
            }
        },
        source=False,
    )
    hits = response["hits"]["hits"]
    assert [hit["_id"] for hit in hits] == ["far", "near"]
    assert hits[0]["_score"] > hits[1]["_score"] > 0


async def test_write_to_missing_index_is_refused(
    elasticsearch_node: ElasticsearchNode,
    client: AsyncElasticsearch,
) -> None:
    if elasticsearch_node.run_dir is None:
        pytest.skip("RAGSTREAM_ES_URL node: action.auto_create_index is not set by this tooling")
    with pytest.raises(NotFoundError):
        await client.index(index=unique_index("missing"), document={"workspace": "w1"})
