"""Opening the Elasticsearch stores from the settings (used by storage/factory.py).

Each store owns its client and closes it in `close()`. The search store is bound to the
configured embedding model: its fingerprint (name and vector size) is read from the
embedder the settings build, without loading the model (MiniLM loads on first use; an
OpenAI-compatible model of unconfigured size is asked once for one vector).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from elasticsearch import AsyncElasticsearch

from ragstream.common.config import EmbeddingConfig, Settings
from ragstream.common.providers.embedding import build_embedder
from ragstream.common.storage.elastic.client import connect
from ragstream.common.storage.elastic.documents import ElasticDocumentStore
from ragstream.common.storage.elastic.layout import IndexLayout
from ragstream.common.storage.elastic.mentions import ElasticCacheStore, ElasticMentionStore
from ragstream.common.storage.elastic.model import ModelFingerprint
from ragstream.common.storage.elastic.search import ElasticSearchStore

T = TypeVar("T")


async def embedding_model(cfg: EmbeddingConfig) -> ModelFingerprint:
    embedder = build_embedder(cfg)
    try:
        if embedder.dimensions == 0:
            await embedder.embed(["vector size probe"])
        return ModelFingerprint.of(embedder)
    finally:
        await embedder.close()


async def _with_client(
    settings: Settings, open_: Callable[[AsyncElasticsearch, IndexLayout], Awaitable[T]]
) -> T:
    client = await connect(settings.elasticsearch)
    try:
        return await open_(client, IndexLayout(settings.elasticsearch.index_prefix))
    except BaseException:
        await client.close()
        raise


async def open_search_store(settings: Settings) -> ElasticSearchStore:
    model = await embedding_model(settings.embedding)
    return await _with_client(
        settings, lambda c, layout: ElasticSearchStore.open(c, layout, model, owns_client=True)
    )


async def open_document_store(settings: Settings) -> ElasticDocumentStore:
    return await _with_client(
        settings, lambda c, layout: ElasticDocumentStore.open(c, layout, owns_client=True)
    )


async def open_mention_store(settings: Settings) -> ElasticMentionStore:
    return await _with_client(
        settings, lambda c, layout: ElasticMentionStore.open(c, layout, owns_client=True)
    )


async def open_cache_store(settings: Settings) -> ElasticCacheStore:
    return await _with_client(
        settings, lambda c, layout: ElasticCacheStore.open(c, layout, owns_client=True)
    )
