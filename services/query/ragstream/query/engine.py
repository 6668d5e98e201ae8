"""The query pipeline, wired from its stages (DESIGN.md section 5).

Retrieval and answering are separate calls so that Retrieve, Query and StreamQuery share
one retrieval path and differ only in what they do with its result.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from ragstream.common.models import Collection, Hit
from ragstream.common.providers.embedding import Embedder
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.text.analyzer import analyze
from ragstream.common.text.tokens import count_tokens
from ragstream.common.timing import StageTimer
from ragstream.query.stages.answer import build_messages, extractive_answer, render_prompt
from ragstream.query.stages.budget import fit_chunks
from ragstream.query.stages.retrieve import SearchSpec, hybrid_search
from ragstream.query.types import ContextChunk, Mode, QueryInput, Reference, Retrieval

GRAPH_PENDING_NOTE = (
    "knowledge-graph retrieval is not available in this build: "
    "answered from chunk search (naive mode)"
)


class QueryEngine:
    def __init__(
        self,
        search: SearchStore,
        embedder: Embedder,
        chat: ChatModel | None,
        candidates: int = 50,
        rrf_k: int = 60,
    ) -> None:
        self._search = search
        self._embedder = embedder
        self._chat = chat
        self._candidates = candidates
        self._rrf_k = rrf_k

    @property
    def providers(self) -> dict[str, str]:
        return {
            "embedding": self._embedder.name,
            "llm": self._chat.name if self._chat else "extractive (no LLM configured)",
            "reranker": "none",
        }

    async def retrieve(self, q: QueryInput, timer: StageTimer) -> Retrieval:
        result = Retrieval(query_terms=tuple(analyze(q.query)))
        if q.options.mode is Mode.BYPASS:
            return result
        if q.options.mode is not Mode.NAIVE:
            result.notes.append(GRAPH_PENDING_NOTE)
        with timer.stage("embed"):
            vector = (await self._embedder.embed([q.query]))[0]
        spec = SearchSpec(
            workspace=q.workspace,
            terms=result.query_terms,
            vector=vector,
            search_filter=q.search_filter,
            candidates=max(self._candidates, q.options.chunk_top_k),
            limit=q.options.chunk_top_k,
            rrf_k=self._rrf_k,
            min_cosine=q.options.cosine_threshold,
        )
        with timer.stage("search_chunks"):
            hits = await hybrid_search(self._search, Collection.CHUNKS, spec)
        with timer.stage("budget"):
            chunks = fit_chunks(_context_chunks(hits), self._available_tokens(q))
        result.chunks, result.references = _with_references(chunks)
        return result

    def messages(self, q: QueryInput, retrieval: Retrieval) -> list[ChatMessage]:
        return build_messages(q.query, retrieval.chunks, retrieval.references, q.options)

    def prompt(self, q: QueryInput, retrieval: Retrieval) -> str:
        return render_prompt(self.messages(q, retrieval))

    async def answer(self, q: QueryInput, retrieval: Retrieval, timer: StageTimer) -> str:
        parts = [part async for part in self.stream_answer(q, retrieval, timer)]
        return "".join(parts)

    async def stream_answer(
        self, q: QueryInput, retrieval: Retrieval, timer: StageTimer
    ) -> AsyncIterator[str]:
        """The answer in pieces as the LLM produces them (one piece when extractive)."""
        with timer.stage("answer"):
            if self._chat is None:
                yield extractive_answer(q.query, retrieval.chunks)
                return
            # aclosing: a cancelled client closes the upstream HTTP stream at once.
            async with contextlib.aclosing(
                self._chat.stream(self.messages(q, retrieval))
            ) as deltas:
                async for delta in deltas:
                    yield delta

    def _available_tokens(self, q: QueryInput) -> int:
        overhead = count_tokens(render_prompt(build_messages(q.query, [], [], q.options)))
        return max(0, q.options.max_total_tokens - overhead)


def _context_chunks(hits: list[Hit]) -> list[ContextChunk]:
    return [
        ContextChunk(
            chunk_id=hit.record.id,
            doc_id=hit.record.doc_ids[0] if hit.record.doc_ids else "",
            file_path=str(hit.record.attrs.get("file_path", "")),
            content=hit.record.text,
            score=hit.score,
            tokens=int(hit.record.attrs.get("tokens", 0)) or count_tokens(hit.record.text),
        )
        for hit in hits
    ]


def _with_references(
    chunks: list[ContextChunk],
) -> tuple[list[ContextChunk], list[Reference]]:
    """Numbers the source documents in order of first appearance; chunks cite them."""
    ids: dict[str, Reference] = {}
    cited: list[ContextChunk] = []
    for chunk in chunks:
        if chunk.doc_id not in ids:
            ids[chunk.doc_id] = Reference(str(len(ids) + 1), chunk.doc_id, chunk.file_path)
        ref = ids[chunk.doc_id].reference_id
        cited.append(
            ContextChunk(
                chunk.chunk_id,
                chunk.doc_id,
                chunk.file_path,
                chunk.content,
                chunk.score,
                chunk.tokens,
                ref,
            )
        )
    return cited, list(ids.values())
