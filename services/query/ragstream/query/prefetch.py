"""Reads that need no vector, started while the query's texts are being embedded.

The lexical half of a hybrid search needs no vector, nor does reading the entities the
keywords name, and the embedding round trip is most of a query's wait. So the embed stage
starts the reads the search stages will make (each names them: `types.SearchStage.early`),
and the stage takes the started read that is exactly its own (`hybrid_search` a BM25 search
of the same collection, workspace, terms, filter and size; local retrieval the same records)
instead of reading again. A read nobody took (the query ended early, or a stage read
otherwise) is cancelled when the retrieval ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord
from ragstream.common.storage.protocols import SearchStore


@dataclass(frozen=True, slots=True)
class LexicalSearch:
    """The arguments of one `SearchStore.search_terms` call."""

    collection: Collection
    workspace: str
    terms: tuple[str, ...]
    search_filter: SearchFilter
    limit: int


@dataclass(frozen=True, slots=True)
class RecordRead:
    """The arguments of one `SearchStore.get(..., whole=False)` call."""

    collection: Collection
    workspace: str
    ids: tuple[str, ...]


EarlyRead = LexicalSearch | RecordRead


class Prefetch:
    """The early reads of one retrieval; not thread-safe (one event loop)."""

    def __init__(self, store: SearchStore) -> None:
        self._store = store
        self._started: list[tuple[EarlyRead, asyncio.Task[Any]]] = []

    def start(self, reads: Sequence[EarlyRead]) -> None:
        for read in reads:
            if any(read == started for started, _ in self._started):
                continue
            if call := self._call(read):
                self._started.append((read, asyncio.ensure_future(call)))

    def _call(self, read: EarlyRead) -> Awaitable[Any] | None:
        if isinstance(read, LexicalSearch):
            if not read.terms:
                return None
            return self._store.search_terms(
                read.collection, read.workspace, read.terms, read.search_filter, read.limit
            )
        if not read.ids:
            return None
        return self._store.get(read.collection, read.workspace, read.ids, whole=False)

    def take(self, search: LexicalSearch) -> asyncio.Task[list[Hit]] | None:
        """The started search equal to `search`, handed over (at most once), or None."""
        return cast("asyncio.Task[list[Hit]] | None", self._take(search))

    def take_records(self, read: RecordRead) -> asyncio.Task[list[SearchRecord]] | None:
        """The started record read equal to `read`, handed over (at most once), or None."""
        return cast("asyncio.Task[list[SearchRecord]] | None", self._take(read))

    def _take(self, read: EarlyRead) -> asyncio.Task[Any] | None:
        for index, (started, task) in enumerate(self._started):
            if started == read:
                del self._started[index]
                return task
        return None

    async def close(self) -> None:
        """Cancels the reads nobody took, and waits for them to stop."""
        left = [task for _, task in self._started]
        self._started.clear()
        for task in left:
            task.cancel()
        for task in left:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


async def records(
    store: SearchStore, read: RecordRead, prefetch: Prefetch | None
) -> list[SearchRecord]:
    """The records of `read`: from the started read when there is one, else read now."""
    started = prefetch.take_records(read) if prefetch is not None else None
    if started is not None:
        return await started
    return await store.get(read.collection, read.workspace, read.ids, whole=False)
