"""Opens the Elasticsearch stores (used by ragstream.common.registry), and the vector
indices for `ragstream reindex`.

One client per process serves the five stores; it is closed with the process's exit stack.
The search store is bound to the embedding model the process uses: its fingerprint (name
and vector size) comes from the embedder it is given (an OpenAI-compatible model of
unconfigured size is asked once for one vector). Backends build no providers.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ragstream.common.config import ElasticsearchConfig
from ragstream.common.storage.elastic.client import connect
from ragstream.common.storage.elastic.communities import ElasticCommunityStore
from ragstream.common.storage.elastic.documents import ElasticDocumentStore
from ragstream.common.storage.elastic.layout import IndexLayout
from ragstream.common.storage.elastic.mentions import ElasticCacheStore, ElasticMentionStore
from ragstream.common.storage.elastic.model import ModelFingerprint
from ragstream.common.storage.elastic.reindex import VectorIndices
from ragstream.common.storage.elastic.search import ElasticSearchStore
from ragstream.common.storage.protocols import DataStores

if TYPE_CHECKING:  # the embedder is given, never built here
    from ragstream.common.providers.embedding import Embedder


async def embedding_model(embedder: Embedder) -> ModelFingerprint:
    """The embedder's identity; asks it for one vector when its size is not configured."""
    if embedder.dimensions == 0:
        await embedder.embed(["vector size probe"])
    return ModelFingerprint.of(embedder)


async def open_elastic_stores(
    cfg: ElasticsearchConfig, embedder: Embedder, stack: contextlib.AsyncExitStack
) -> DataStores:
    model = await embedding_model(embedder)
    client = await connect(cfg)
    stack.push_async_callback(client.close)
    layout = IndexLayout(cfg.index_prefix)
    return DataStores(
        search=await ElasticSearchStore.open(client, layout, model),
        docs=await ElasticDocumentStore.open(client, layout),
        mentions=await ElasticMentionStore.open(client, layout),
        cache=await ElasticCacheStore.open(client, layout),
        communities=await ElasticCommunityStore.open(client, layout),
    )


@contextlib.asynccontextmanager
async def open_vector_indices(cfg: ElasticsearchConfig) -> AsyncIterator[VectorIndices]:
    """The vector indices of `cfg.index_prefix`, for rebuilding; the client is closed after."""
    client = await connect(cfg)
    try:
        yield VectorIndices(client, IndexLayout(cfg.index_prefix))
    finally:
        await client.close()
