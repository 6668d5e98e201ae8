"""Stage 2's summaries: one description from an entity's or relation's many fragments.

LightRAG's rule decides when (past 8 fragments or 1,200 tokens: `common/derive.py`); a
summarizer decides how. `LLMSummarizer` asks the configured LLM, map-reduce when the
fragments exceed its context; `TruncatingSummarizer` is the offline choice and invents
nothing. Every LLM call goes through the LLM cache, and the fragments are listed in a
canonical order, so the same set of fragments is summarized once whatever order its
mentions came in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ragstream.common.config import LLMConfig
from ragstream.common.derive import truncated
from ragstream.common.providers.llm import ChatModel
from ragstream.common.storage.protocols import CacheStore
from ragstream.common.text.tokens import DEFAULT_ENCODING
from ragstream.indexer.stages.extract.llm_calls import CachedChat
from ragstream.indexer.stages.extract.parser import ExtractionFormatError
from ragstream.indexer.stages.extract.prompts import AUTO_LANGUAGE, summary_messages

DEFAULT_SUMMARY_TOKENS = 600
"""Target length of a merged description (LightRAG's default)."""
_ITEM_OVERHEAD_TOKENS = 3
"""The "- " and the line break around each description in the summary prompt."""
_MIN_SUMMARY_BUDGET = 64


class Summarizer(Protocol):
    name: str

    async def summarize(self, label: str, fragments: Sequence[str], max_tokens: int) -> str:
        """One description from many fragments, at most about max_tokens long."""
        ...


class TruncatingSummarizer:
    """Offline: keeps the fragments in order while they fit (no LLM, no invented text)."""

    name = "truncate"

    async def summarize(self, label: str, fragments: Sequence[str], max_tokens: int) -> str:
        return truncated(fragments, max_tokens)


class SummaryTooLargeError(ValueError):
    """The context window cannot hold even two description fragments beside the prompt."""


@dataclass(frozen=True, slots=True)
class SummaryResult:
    text: str
    cache_keys: tuple[str, ...]
    """Cache keys of every call: the map calls, then the reduce calls, the final one last."""


class LLMSummarizer:
    """Summaries by an LLM, cached, map-reduce when the fragments exceed the context."""

    def __init__(
        self,
        chat: ChatModel,
        cache: CacheStore,
        model_name: str,
        llm: LLMConfig,
        *,
        language: str = AUTO_LANGUAGE,
        encoding_name: str = DEFAULT_ENCODING,
    ) -> None:
        self._calls = CachedChat(chat, cache, model_name, llm, encoding_name=encoding_name)
        self._language = language
        self.name = f"llm:{model_name}"

    async def summarize(self, label: str, fragments: Sequence[str], max_tokens: int) -> str:
        return (await self.summary(label, fragments, max_tokens=max_tokens)).text

    async def summary(
        self,
        name_or_pair: str | tuple[str, str],
        descriptions: Sequence[str],
        *,
        max_tokens: int = DEFAULT_SUMMARY_TOKENS,
    ) -> SummaryResult:
        """One description from many, with the cache keys of the calls that made it.

        Fragments are packed in order into groups that fit the context; each group is
        summarized (map), and the partial summaries are summarized again (reduce) until one
        call holds them all. A fragment longer than half the room is truncated, so every
        round at least halves the number of texts.
        """
        # A canonical order: the same set of fragments gives the same prompts, so a set that was
        # summarized before is served by the cache whatever order its mentions came in.
        texts = sorted({text for text in descriptions if text.strip()})
        if not texts:
            return SummaryResult("", ())
        budget = self._budget(name_or_pair, max_tokens)
        keys: list[str] = []
        while True:
            groups = self._pack(texts, budget)
            if len(groups) == 1:
                text, key = await self._call(name_or_pair, groups[0], max_tokens)
                return SummaryResult(text, (*keys, key))
            async with asyncio.TaskGroup() as group:
                tasks = [
                    group.create_task(self._call(name_or_pair, part, max_tokens)) for part in groups
                ]
            texts = [task.result()[0] for task in tasks]
            keys.extend(task.result()[1] for task in tasks)

    async def _call(
        self, name_or_pair: str | tuple[str, str], texts: Sequence[str], max_tokens: int
    ) -> tuple[str, str]:
        messages = summary_messages(name_or_pair, texts, max_tokens, self._language)
        reply = await self._calls.ask(messages)
        text = reply.text.strip()
        if not text:
            raise ExtractionFormatError(f"the model returned an empty summary of {name_or_pair!r}")
        await self._calls.remember(reply)
        return text, reply.key

    def _budget(self, name_or_pair: str | tuple[str, str], max_tokens: int) -> int:
        """Tokens left for the descriptions once the prompt itself is counted."""
        empty = summary_messages(name_or_pair, [], max_tokens, self._language)
        budget = self._calls.input_budget - self._calls.prompt_tokens(empty)
        if budget < _MIN_SUMMARY_BUDGET:
            raise SummaryTooLargeError(
                f"only {budget} tokens of the context are left for descriptions of "
                f"{name_or_pair!r}; raise llm.context_tokens or lower llm.max_output_tokens"
            )
        return budget

    def _pack(self, texts: Sequence[str], budget: int) -> list[list[str]]:
        item_limit = budget // 2 - _ITEM_OVERHEAD_TOKENS
        groups: list[list[str]] = [[]]
        used = 0
        for raw in texts:
            text = self._calls.truncate(raw, item_limit)
            cost = self._calls.tokens(text) + _ITEM_OVERHEAD_TOKENS
            if groups[-1] and used + cost > budget:
                groups.append([])
                used = 0
            groups[-1].append(text)
            used += cost
        return groups
