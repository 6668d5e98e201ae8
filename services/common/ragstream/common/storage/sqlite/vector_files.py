"""A (collection, workspace)'s vector index made from what is stored: loaded from the
database, or read back from the file an approximate index was saved to beside it.

Files are `vectors-<collection>-<sha256(workspace)[:16]>-g<change counter>.faiss` and `.npz`
(ann.py writes both); an index is read back only at exactly the change counter it was saved
at, so a file can never stand for records written after it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
from pathlib import Path

import numpy as np

from ragstream.common.models import Collection
from ragstream.common.storage.sqlite import search_rows
from ragstream.common.storage.sqlite import search_schema as schema
from ragstream.common.storage.sqlite.ann import ApproximateIndex, training_sample
from ragstream.common.storage.sqlite.dense import DenseIndex, FloatMatrix, IntArray, VectorIndex

log = logging.getLogger(__name__)

Key = tuple[Collection, str]
"""(collection, workspace): what one vector index holds."""

LOAD_BLOCK = 65_536
"""Vectors read at a time into an approximate index being built from the database."""
EXACT_BLOCK = 4_096
"""Vectors read at a time into an exact index's matrix: the rows of a block come as one
bytes object each, whose memory the next block reuses (6 MB of 384-d vectors)."""


def load(
    conn: sqlite3.Connection,
    key: Key,
    stored: tuple[int | None, int],
    approximate_from: int,
) -> VectorIndex:
    """The key's index from the database; `stored`: the snapshot's (vector size, change
    counter), `search_rows.state`. Approximate from `approximate_from` vectors."""
    collection, workspace = key
    dim, generation = stored
    tables = schema.tables(collection)
    pks = search_rows.vector_pks(conn, tables, workspace)
    if dim is not None and len(pks) >= approximate_from:
        index = _streamed(conn, tables, pks, dim)
        index.generation = generation
        return index
    matrix = search_rows.load_matrix(conn, tables, pks, dim or 0, EXACT_BLOCK)
    return DenseIndex(dim, pks, matrix, generation)


def approximate(rows: tuple[IntArray, FloatMatrix], generation: int) -> ApproximateIndex:
    """An approximate index of an exact one's rows, at its change counter."""
    pks, matrix = rows
    index = ApproximateIndex.build(matrix.shape[1], pks, matrix)
    index.generation = generation
    return index


def save(folder: Path, key: Key, index: ApproximateIndex) -> None:
    """Writes the index as of its change counter, then drops older copies. Another process
    may save the same key: each copy names its counter, and is complete before it is
    renamed into place."""
    path = folder / f"{_stem(key)}-g{index.generation}.faiss"
    partial = path.with_name(f".{path.name}.partial")
    index.write(partial)
    partial.with_suffix(".npz").replace(path.with_suffix(".npz"))
    partial.replace(path)
    for old in folder.glob(f"{_stem(key)}-g*"):
        if old.suffix in (".faiss", ".npz") and old.stem != path.stem:
            with contextlib.suppress(FileNotFoundError):
                old.unlink()


def saved(folder: Path, key: Key, generation: int) -> ApproximateIndex | None:
    """The index saved at exactly `generation`, if any can be read."""
    path = folder / f"{_stem(key)}-g{generation}.faiss"
    if not path.exists():
        return None
    try:
        index = ApproximateIndex.read(path)
    except (OSError, RuntimeError, ValueError, KeyError) as error:
        log.warning("%s cannot be read (%s); building it again", path, error)
        return None
    index.generation = generation
    return index


def _stem(key: Key) -> str:
    """The file name of a key's index, without its change counter."""
    collection, workspace = key
    digest = hashlib.sha256(workspace.encode()).hexdigest()[:16]
    return f"vectors-{collection.value}-{digest}"


def _streamed(
    conn: sqlite3.Connection, tables: schema.Tables, pks: IntArray, dim: int
) -> ApproximateIndex:
    """The approximate index of `pks`, trained on a sample read first, then filled block by
    block: at 1M vectors it never holds the float32 matrix (1.5 GB) it would be built from."""
    [(_, sample)] = search_rows.vector_blocks(conn, tables, training_sample(pks), dim, len(pks))
    index = ApproximateIndex.empty(dim, sample[np.any(sample != 0, axis=1)], len(pks))
    for block_pks, block in search_rows.vector_blocks(conn, tables, pks, dim, LOAD_BLOCK):
        index.upsert(block_pks.tolist(), block)
    return index
