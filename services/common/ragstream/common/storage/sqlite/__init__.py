"""Embedded backends: every storage role in one SQLite database per data directory."""

from ragstream.common.storage.sqlite.db import Database, DatabaseClosedError, SchemaVersionError
from ragstream.common.storage.sqlite.dense import DimensionMismatchError
from ragstream.common.storage.sqlite.documents import SqliteDocumentStore
from ragstream.common.storage.sqlite.search import SqliteSearchStore

__all__ = [
    "Database",
    "DatabaseClosedError",
    "DimensionMismatchError",
    "SchemaVersionError",
    "SqliteDocumentStore",
    "SqliteSearchStore",
]
