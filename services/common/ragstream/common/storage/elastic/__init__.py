"""The Elasticsearch backend: every storage role of the embedded store except the graph."""

from ragstream.common.storage.elastic.communities import ElasticCommunityStore
from ragstream.common.storage.elastic.documents import ElasticDocumentStore
from ragstream.common.storage.elastic.layout import IndexLayout
from ragstream.common.storage.elastic.mentions import ElasticCacheStore, ElasticMentionStore
from ragstream.common.storage.elastic.model import ModelFingerprint, ModelMismatchError
from ragstream.common.storage.elastic.search import ElasticSearchStore

__all__ = [
    "ElasticCacheStore",
    "ElasticCommunityStore",
    "ElasticDocumentStore",
    "ElasticMentionStore",
    "ElasticSearchStore",
    "IndexLayout",
    "ModelFingerprint",
    "ModelMismatchError",
]
