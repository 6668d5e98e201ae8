"""Filter stage: the caller's metadata, document and time filter, resolved once to the
documents it allows. Every later search runs with that document set inside it, and the graph
paths keep only what allowed documents mention (stages/graph.py).

A filter that allows no document ends the retrieval here with an empty context: it never
widens into an unfiltered search.
"""

from __future__ import annotations

from opentelemetry.trace import Span

from ragstream.common.storage.protocols import DocumentStore
from ragstream.common.telemetry import annotate
from ragstream.query.types import QueryState

NOTHING_ALLOWED_NOTE = "no document matches the filter: nothing was searched"


class FilterStage:
    name = "filter"

    def __init__(self, docs: DocumentStore) -> None:
        self._docs = docs

    def applies(self, state: QueryState) -> bool:
        return not state.q.search_filter.unrestricted

    async def run(self, state: QueryState, span: Span) -> None:
        search_filter = state.q.search_filter
        allowed: frozenset[str] = frozenset()
        if not search_filter.allows_nothing:
            allowed = frozenset(await self._docs.matching(state.q.workspace, search_filter))
        state.allowed = allowed
        annotate(span, documents=len(allowed))
        if not allowed:
            state.result.notes.append(NOTHING_ALLOWED_NOTE)
            state.result.nothing_allowed = True
            state.done = True
