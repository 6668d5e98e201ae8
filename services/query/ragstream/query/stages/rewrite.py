"""Rewrite stage: the LLM rewrites the question before the searches, when asked to.

- HyDE (Gao et al., "Precise Zero-Shot Dense Retrieval without Relevance Labels", 2022):
  the LLM writes a short passage that would answer the question, and the dense searches
  embed that passage instead of the question. A question and its answer are phrased
  differently; a hypothetical answer sits closer to real answers in the vector space. BM25
  still searches the question's own words.
- Multi-query: the LLM splits the question into sub-queries (one per fact a multi-part
  question needs); the chunk search runs for the question and each sub-query, and the
  rankings are fused by RRF (query/fusion.py).

Both are off by default: they cost an LLM call per new question and help only where the
evaluation shows answers that are in the index but not retrieved. Replies are cached like
keywords. The stage never fails a query: without an LLM, on an LLM failure, or with less
than `query.rewrite_min_seconds` left before the caller's deadline, the plain question is
used and a note says why.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re

from opentelemetry.trace import Span

from ragstream.common.providers import ProviderError
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import CacheStore
from ragstream.common.telemetry import annotate
from ragstream.query.lease import remote
from ragstream.query.types import QueryState, Rewrite

HYDE_PROMPT = """Write a short passage (3 to 5 sentences) that answers the question below, in \
the style of a reference document. State facts plainly; if you do not know them, write what \
such a passage would plausibly say. Answer in the language of the question. Return only the \
passage.

Question: {query}"""

MULTI_QUERY_PROMPT = """Split the question below into at most {count} simpler search queries, \
one for each fact that answering it needs. Keep names exactly as written. Use the language of \
the question. Return only a JSON array of strings, no prose. A question that needs one fact \
gets an array with one query.

Question: {query}"""

HYDE_MAX_TOKENS = 256
MULTI_QUERY_MAX_TOKENS = 256
MAX_SUB_QUERY_CHARS = 500
_JSON_ARRAY = re.compile(r"\[.*\]", re.DOTALL)


def parse_sub_queries(text: str, limit: int, question: str) -> tuple[str, ...]:
    """The model's sub-queries: a JSON array (in fences or prose), else one per line;
    blank ones, repeats and the question itself dropped, at most `limit`."""
    items: list[object] = []
    match = _JSON_ARRAY.search(text)
    if match:
        try:
            parsed = json.loads(re.sub(r",\s*]", "]", match.group(0)))
            items = parsed if isinstance(parsed, list) else []
        except json.JSONDecodeError:
            items = []
    if not items:
        items = [line.strip(" -*\t0123456789.)") for line in text.splitlines()]
    seen = {question.strip().casefold()}
    kept: list[str] = []
    for item in items:
        query = " ".join(str(item).split())[:MAX_SUB_QUERY_CHARS]
        if query and query.casefold() not in seen:
            seen.add(query.casefold())
            kept.append(query)
    return tuple(kept[:limit])


class RewriteStage:
    name = "rewrite"

    def __init__(self, chat: ChatModel | None, cache: CacheStore, min_seconds: float) -> None:
        self._chat = chat
        self._cache = cache
        self._min_seconds = min_seconds

    def applies(self, state: QueryState) -> bool:
        return state.q.options.rewrite is not Rewrite.NONE

    async def run(self, state: QueryState, span: Span) -> None:
        strategy = state.q.options.rewrite
        annotate(span, strategy=strategy.value)
        skipped = self._skip_reason(state)
        if skipped:
            state.result.notes.append(f"query rewriting ({strategy.value}) skipped: {skipped}")
            annotate(span, outcome="skipped")
            return
        try:
            async with asyncio.timeout(_budget(state, self._min_seconds)):
                await self._rewrite(state, strategy)
        except (ProviderError, TimeoutError) as exc:
            reason = str(exc) or "no reply before the deadline"
            state.result.notes.append(
                f"query rewriting ({strategy.value}) failed: {reason}; the plain question was used"
            )
            annotate(span, outcome="failed")
            return
        annotate(span, outcome="rewritten", sub_queries=len(state.sub_queries))

    def _skip_reason(self, state: QueryState) -> str:
        if self._chat is None:
            return "no LLM configured"
        if (
            state.q.options.rewrite is Rewrite.MULTI_QUERY
            and not state.q.options.mode.searches_chunks
        ):
            return f"{state.q.options.mode.value} mode has no chunk search to fan out"
        left = state.q.seconds_left()
        if left is not None and left < self._min_seconds:
            return f"{left:.1f} s left before the deadline"
        return ""

    async def _rewrite(self, state: QueryState, strategy: Rewrite) -> None:
        q = state.q
        if strategy is Rewrite.HYDE:
            prompt = HYDE_PROMPT.format(query=q.query)
            state.hypothetical = (await self._ask(prompt, HYDE_MAX_TOKENS)).strip()
        else:
            count = q.options.max_sub_queries
            prompt = MULTI_QUERY_PROMPT.format(query=q.query, count=count)
            reply = await self._ask(prompt, MULTI_QUERY_MAX_TOKENS)
            state.sub_queries = parse_sub_queries(reply, count, q.query)

    async def _ask(self, prompt: str, max_tokens: int) -> str:
        """The model's reply, from the cache when this exact prompt was asked before."""
        assert self._chat is not None
        digest = hashlib.sha256(json.dumps([self._chat.name, prompt]).encode()).hexdigest()
        key = f"rewrite:{digest}"
        cached = await self._cache.get(key)
        if cached is None:
            messages = [ChatMessage("user", prompt)]
            async with remote():
                reply = await self._chat.complete(messages, max_tokens=max_tokens, temperature=0.0)
            cached = reply.text
            await self._cache.put(key, cached)
        return cached


def _budget(state: QueryState, reserve_s: float) -> float | None:
    """The time the rewrite may take: what is left before the deadline, less what the rest
    of the query needs (half the reserve); no limit without a deadline."""
    left = state.q.seconds_left()
    return None if left is None else max(0.0, left - reserve_s / 2)
