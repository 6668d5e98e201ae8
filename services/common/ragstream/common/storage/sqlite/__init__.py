"""Embedded backends: every storage role in one SQLite database per data directory."""

from ragstream.common.storage.protocols import DataStores
from ragstream.common.storage.sqlite.communities import SqliteCommunityStore
from ragstream.common.storage.sqlite.db import Database, DatabaseClosedError, SchemaVersionError
from ragstream.common.storage.sqlite.dense import DimensionMismatchError
from ragstream.common.storage.sqlite.documents import SqliteDocumentStore
from ragstream.common.storage.sqlite.mentions import SqliteCacheStore, SqliteMentionStore
from ragstream.common.storage.sqlite.search import APPROXIMATE_FROM, SqliteSearchStore


async def open_embedded_stores(
    db: Database, approximate_from: int = APPROXIMATE_FROM
) -> DataStores:
    """Every role but the graph, in the data directory's one database."""
    return DataStores(
        search=await SqliteSearchStore.open(db, approximate_from),
        docs=await SqliteDocumentStore.open(db),
        mentions=await SqliteMentionStore.open(db),
        cache=await SqliteCacheStore.open(db),
        communities=await SqliteCommunityStore.open(db),
    )


__all__ = [
    "Database",
    "DatabaseClosedError",
    "DimensionMismatchError",
    "SchemaVersionError",
    "SqliteDocumentStore",
    "SqliteSearchStore",
    "open_embedded_stores",
]
