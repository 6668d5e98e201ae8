"""Community stage (mode `community`): the community reports a corpus-wide question reads,
and with an LLM the points each makes about it (community_search.py); the answer step then
reduces them into one answer."""

from __future__ import annotations

from dataclasses import replace

from opentelemetry.trace import Span

from ragstream.common.models import SearchFilter
from ragstream.common.providers.embedding import Embedder
from ragstream.common.telemetry import annotate
from ragstream.query.community_search import CommunitySearch
from ragstream.query.lease import remote
from ragstream.query.types import Mode, QueryState


class CommunityStage:
    name = "search_communities"

    def __init__(self, search: CommunitySearch, embedder: Embedder) -> None:
        self._search = search
        self._embedder = embedder

    def applies(self, state: QueryState) -> bool:
        return state.q.options.mode is Mode.COMMUNITY

    async def run(self, state: QueryState, span: Span) -> None:
        q = state.q
        async with remote():
            vector = (await self._embedder.embed([q.query]))[0]
        allowed = state.allowed
        search_filter = (
            SearchFilter() if allowed is None else replace(SearchFilter(), doc_ids=allowed)
        )
        found = await self._search.context(q.workspace, q.query, vector, search_filter)
        state.result.community = found
        annotate(
            span, reports=len(found.reports), points=len(found.points), llm_calls=found.llm_calls
        )
