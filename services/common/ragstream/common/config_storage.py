"""Where the data lives: `storage` (the backends of common/registry.py, and the embedded
database's threads, storage/sqlite/db.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class StorageConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    search: Literal["sqlite", "elasticsearch"] = "sqlite"
    graph: Literal["sqlite", "nebula"] = "sqlite"
    approximate_from: int = Field(200_000, ge=1)
    """Embedded search store: the vectors from which a collection of a workspace is searched
    by its approximate index (storage/sqlite/ann.py) rather than exactly."""
    reader_threads: int = Field(1, ge=1, le=64)
    """Embedded stores: threads that run the database's reads, dense searches aside. Python's
    sqlite3 releases the interpreter lock around every row it steps, so reads that run at
    once hand the lock to and fro between rows; one thread does them one after the other
    (storage/sqlite/db.py)."""
    scan_threads: int = Field(1, ge=1, le=64)
    """Embedded search store: threads that run dense searches (each in a read of its own).
    Their scoring runs in numpy or faiss without the interpreter lock, beside the other
    reads; more let the dense searches of a mix query run at once on a machine with the
    cores for it."""
