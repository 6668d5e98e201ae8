"""The query pipeline (docs/architecture.md, "Query"): one list of steps, run in order.

    filter -> keywords -> rewrite -> embed -> (search_entities | search_relations | search_chunks)
           -> graph_chunks -> fuse -> rerank -> budget -> workspace (retrieve)
           -> answer                                              (answer / stream_answer)

Each stage (query/stages/) says whether it applies to the query (its mode and options),
reads and writes one `QueryState`, and is timed and traced as a span of its own name. A stage
may end the retrieval early (a filter that allows no document). The three searches form one
step: each reads only what the stages before them wrote and writes its own part of the
state, so they run concurrently (the store's reads and the vector scoring leave the event
loop), and their results merge in a fixed order whichever ends first; when one fails, the
others are cancelled and its error is the query's. Retrieval and answering are separate
calls, so Retrieve, Query and StreamQuery share one retrieval path and differ only in what
they do with its result. The engine knows no transport: the caller's deadline comes in
`QueryInput.deadline`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Coroutine, Iterable
from typing import Any

from ragstream.common.providers.embedding import Embedder
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import Stores
from ragstream.common.text.analyzer import analyze
from ragstream.common.timing import StageTimer
from ragstream.query.community_search import CommunitySearch
from ragstream.query.lease import remote
from ragstream.query.prefetch import Prefetch
from ragstream.query.prompt import build_messages, render_prompt
from ragstream.query.reranking import Reranking
from ragstream.query.sentences import RERANK_CANDIDATES, best_sentences, rerank_quotes
from ragstream.query.stages.answer import (
    BYPASS_WITHOUT_LLM_ANSWER,
    NO_CONTEXT_ANSWER,
    empty_workspace_answer,
    extractive_answer,
    quoted_answer,
)
from ragstream.query.stages.budget import BudgetStage
from ragstream.query.stages.community import CommunityStage
from ragstream.query.stages.embed import EmbedStage
from ragstream.query.stages.empty import EmptyWorkspace
from ragstream.query.stages.filter import FilterStage
from ragstream.query.stages.graph import EntitySearch, RelationSearch
from ragstream.query.stages.keywords import KeywordStage
from ragstream.query.stages.merge import MergeSources
from ragstream.query.stages.pick import GraphChunks
from ragstream.query.stages.rerank import RerankStage
from ragstream.query.stages.retrieve import ChunkSearch
from ragstream.query.stages.rewrite import RewriteStage
from ragstream.query.types import Mode, QueryInput, QueryState, Retrieval, Stage


class Together:
    """Stages that run concurrently as one step of the pipeline (see the module doc)."""

    def __init__(self, *stages: Stage) -> None:
        self.stages = stages


class QueryEngine:
    def __init__(
        self,
        stores: Stores,
        embedder: Embedder,
        chat: ChatModel | None,
        candidates: int = 50,
        rrf_k: int = 60,
        reranking: Reranking | None = None,
        rewrite_min_seconds: float = 2.0,
    ) -> None:
        self._embedder = embedder
        self._chat = chat
        self._reranking = reranking
        self._reranker = reranking.reranker.name if reranking else "none (no reranker configured)"
        self._search = stores.search
        searches = (
            EntitySearch(stores, candidates, rrf_k),
            RelationSearch(stores, candidates, rrf_k),
            ChunkSearch(stores.search, candidates, rrf_k),
        )
        self.steps: tuple[Stage | Together, ...] = (
            FilterStage(stores.docs),
            KeywordStage(chat, stores.cache, stores.search),
            RewriteStage(chat, stores.cache, rewrite_min_seconds),
            EmbedStage(embedder, searches),
            Together(*searches),
            GraphChunks(stores.search),
            MergeSources(stores.search, reranking),
            RerankStage(reranking),
            BudgetStage(),
            EmptyWorkspace(stores.search),
        )
        self._community = CommunitySearch(stores.search, stores.communities, chat)
        self.community_steps: tuple[Stage, ...] = (
            FilterStage(stores.docs),
            CommunityStage(self._community, embedder),
        )

    @property
    def providers(self) -> dict[str, str]:
        return {
            "embedding": self._embedder.name,
            "llm": self._chat.name if self._chat else "extractive (no LLM configured)",
            "reranker": self._reranker,
        }

    async def retrieve(self, q: QueryInput, timer: StageTimer) -> Retrieval:
        if q.options.mode is Mode.BYPASS:
            return Retrieval()
        prefetch = Prefetch(self._search)
        state = QueryState(q, Retrieval(query_terms=tuple(analyze(q.query))), prefetch=prefetch)
        steps = self.community_steps if q.options.mode is Mode.COMMUNITY else self.steps
        try:
            for step in steps:
                if state.done:
                    break
                stages = step.stages if isinstance(step, Together) else (step,)
                running = [stage for stage in stages if stage.applies(state)]
                if len(running) == 1:
                    await _timed(running[0], state, timer)
                elif running:
                    await _all(_timed(stage, state, timer) for stage in running)
        finally:
            await prefetch.close()
        return state.result

    def messages(self, q: QueryInput, retrieval: Retrieval) -> list[ChatMessage]:
        if q.options.mode is Mode.BYPASS:
            return [*q.options.history, ChatMessage("user", q.query)]
        return build_messages(q.query, retrieval, q.options)

    def prompt(self, q: QueryInput, retrieval: Retrieval) -> str:
        return render_prompt(self.messages(q, retrieval))

    async def answer(self, q: QueryInput, retrieval: Retrieval, timer: StageTimer) -> str:
        """The whole answer. One completion, not a stream collected: parsing every streamed
        chunk costs more CPU than the rest of the query (about 0.5 ms a token)."""
        if self._chat is None or retrieval.nothing_allowed or retrieval.community is not None:
            parts = [part async for part in self.stream_answer(q, retrieval, timer)]
            return "".join(parts)
        with timer.stage("answer", answerer="llm"):
            async with remote():
                return (await self._chat.complete(self.messages(q, retrieval))).text

    async def stream_answer(
        self, q: QueryInput, retrieval: Retrieval, timer: StageTimer
    ) -> AsyncGenerator[str, None]:
        """The answer in pieces as the LLM produces them (one piece when extractive).

        When the caller's filter allows no document, the answer says that nothing was found,
        without asking the LLM (which could only answer from outside the documents). An
        empty workspace is only noted (stages/empty.py) when there is an LLM, which may still
        answer from the conversation's history.
        """
        answerer = "llm" if self._chat else "extractive"
        with timer.stage("answer", answerer=answerer):
            if retrieval.nothing_allowed:
                yield NO_CONTEXT_ANSWER
                return
            if retrieval.community is not None:  # mode community: the reduce step
                async for delta in self._community.answer(q.query, retrieval.community):
                    yield delta
                return
            if self._chat is None:
                yield await self._offline_answer(q, retrieval)
                return
            # aclosing: a cancelled client closes the upstream HTTP stream at once.
            stream = self._chat.stream(self.messages(q, retrieval))
            async with remote(), contextlib.aclosing(stream) as deltas:
                async for delta in deltas:
                    yield delta

    async def _offline_answer(self, q: QueryInput, retrieval: Retrieval) -> str:
        """Without an LLM: bypass has no answerer at all (it never searches, so "nothing found"
        would be wrong), an empty workspace has nothing to quote, else the extractive answer."""
        if q.options.mode is Mode.BYPASS:
            return BYPASS_WITHOUT_LLM_ANSWER
        if retrieval.workspace_empty:
            return empty_workspace_answer(q.workspace)
        return await self._extractive(q, retrieval)

    async def _extractive(self, q: QueryInput, retrieval: Retrieval) -> str:
        """The extractive answer; its sentences ordered by the reranker when one is on."""
        if self._reranking is None or not q.options.enable_rerank:
            return extractive_answer(q.query, retrieval.chunks)
        candidates = best_sentences(q.query, retrieval.chunks, RERANK_CANDIDATES)
        async with remote():
            quotes = await rerank_quotes(self._reranking.reranker, q.query, candidates, 3)
        return quoted_answer(quotes)


async def _timed(stage: Stage, state: QueryState, timer: StageTimer) -> None:
    with timer.stage(stage.name) as span:
        await stage.run(state, span)


async def _all(calls: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Runs the calls concurrently; the first error cancels the rest and is raised as it is."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
