"""The query pipeline, wired from its stages (DESIGN.md section 5).

Retrieval and answering are separate calls so that Retrieve, Query and StreamQuery share
one retrieval path and differ only in what they do with its result.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ragstream.common.providers.embedding import Embedder
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import Stores
from ragstream.common.telemetry import annotate
from ragstream.common.text.tokens import count_tokens
from ragstream.common.timing import StageTimer
from ragstream.query.stages.answer import build_messages, extractive_answer, render_prompt
from ragstream.query.stages.budget import entity_line, fit, fit_chunks, relation_line
from ragstream.query.stages.context import ContextBuilder
from ragstream.query.stages.keywords import NO_KEYWORDS_NOTE
from ragstream.query.stages.rerank import Reranking
from ragstream.query.types import Mode, QueryInput, Retrieval


class QueryEngine:
    def __init__(
        self,
        stores: Stores,
        embedder: Embedder,
        chat: ChatModel | None,
        candidates: int = 50,
        rrf_k: int = 60,
        reranking: Reranking | None = None,
    ) -> None:
        self._stores = stores
        self._embedder = embedder
        self._chat = chat
        self._reranker = reranking.reranker.name if reranking else "none (no reranker configured)"
        self._context = ContextBuilder(stores, embedder, chat, candidates, rrf_k, reranking)

    @property
    def providers(self) -> dict[str, str]:
        return {
            "embedding": self._embedder.name,
            "llm": self._chat.name if self._chat else "extractive (no LLM configured)",
            "reranker": self._reranker,
        }

    async def retrieve(self, q: QueryInput, timer: StageTimer) -> Retrieval:
        result = Retrieval()
        if q.options.mode is Mode.BYPASS:
            return result
        allowed = None
        if not q.search_filter.is_empty:
            with timer.stage("filter"):
                allowed = frozenset(await self._stores.docs.matching(q.workspace, q.search_filter))
        result = await self._context.build(q, allowed, timer)
        if (
            not result.keywords.high
            and not result.keywords.low
            and q.options.mode is not Mode.NAIVE
        ):
            result.notes.append(NO_KEYWORDS_NOTE)
        with timer.stage("budget") as span:
            self._apply_budget(q, result)
            annotate(
                span,
                entities=len(result.entities),
                relations=len(result.relations),
                chunks=len(result.chunks),
                references=len(result.references),
            )
        return result

    def _apply_budget(self, q: QueryInput, result: Retrieval) -> None:
        o = q.options
        result.entities = fit(
            result.entities, lambda e: count_tokens(entity_line(e)), o.max_entity_tokens
        )
        result.relations = fit(
            result.relations, lambda r: count_tokens(relation_line(r)), o.max_relation_tokens
        )
        chunks, result.chunks = result.chunks, []
        overhead = count_tokens(render_prompt(build_messages(q.query, result, o)))
        result.chunks = fit_chunks(chunks, max(0, o.max_total_tokens - overhead))
        result.references = [
            r
            for r in result.references
            if any(c.reference_id == r.reference_id for c in result.chunks)
        ]

    def messages(self, q: QueryInput, retrieval: Retrieval) -> list[ChatMessage]:
        if q.options.mode is Mode.BYPASS:
            return [*q.options.history, ChatMessage("user", q.query)]
        return build_messages(q.query, retrieval, q.options)

    def prompt(self, q: QueryInput, retrieval: Retrieval) -> str:
        return render_prompt(self.messages(q, retrieval))

    async def answer(self, q: QueryInput, retrieval: Retrieval, timer: StageTimer) -> str:
        parts = [part async for part in self.stream_answer(q, retrieval, timer)]
        return "".join(parts)

    async def stream_answer(
        self, q: QueryInput, retrieval: Retrieval, timer: StageTimer
    ) -> AsyncIterator[str]:
        """The answer in pieces as the LLM produces them (one piece when extractive)."""
        with timer.stage("answer", answerer="llm" if self._chat else "extractive"):
            if self._chat is None:
                yield extractive_answer(q.query, retrieval.chunks)
                return
            # aclosing: a cancelled client closes the upstream HTTP stream at once.
            stream = self._chat.stream(self.messages(q, retrieval))
            async with contextlib.aclosing(stream) as deltas:
                async for delta in deltas:
                    yield delta
