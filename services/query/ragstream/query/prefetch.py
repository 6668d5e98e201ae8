"""BM25 searches started while the query's texts are being embedded.

The lexical half of a hybrid search needs no vector, and the embedding round trip is most of
a query's wait. So the embed stage starts the lexical searches the search stages will make
(each names them: `types.SearchStage.lexical`), and `hybrid_search` takes the started search
that is exactly its own (same collection, workspace, terms, filter and size) instead of
searching again. A search nobody took (the query ended early, or a stage searched otherwise)
is cancelled when the retrieval ends.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from ragstream.common.models import Collection, Hit, SearchFilter
from ragstream.common.storage.protocols import SearchStore


@dataclass(frozen=True, slots=True)
class LexicalSearch:
    """The arguments of one `SearchStore.search_terms` call."""

    collection: Collection
    workspace: str
    terms: tuple[str, ...]
    search_filter: SearchFilter
    limit: int


class Prefetch:
    """The lexical searches of one retrieval, started early; not thread-safe (one event loop)."""

    def __init__(self, store: SearchStore) -> None:
        self._store = store
        self._started: list[tuple[LexicalSearch, asyncio.Task[list[Hit]]]] = []

    def start(self, searches: Sequence[LexicalSearch]) -> None:
        for search in searches:
            if not search.terms or any(search == s for s, _ in self._started):
                continue
            call = self._store.search_terms(
                search.collection,
                search.workspace,
                search.terms,
                search.search_filter,
                search.limit,
            )
            self._started.append((search, asyncio.ensure_future(call)))

    def take(self, search: LexicalSearch) -> asyncio.Task[list[Hit]] | None:
        """The started search equal to `search`, handed over (at most once), or None."""
        for index, (started, task) in enumerate(self._started):
            if started == search:
                del self._started[index]
                return task
        return None

    async def close(self) -> None:
        """Cancels the searches nobody took, and waits for them to stop."""
        left = [task for _, task in self._started]
        self._started.clear()
        for task in left:
            task.cancel()
        for task in left:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
