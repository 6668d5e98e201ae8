"""LLM calls behind the LLM cache: a prompt that was answered once is never sent again.

The cache key is the sha256 of (model, messages, parameters), so changing the prompt text,
the model or a sampling parameter misses the cache, and re-indexing unchanged chunks costs
no LLM call. A reply is stored only after its caller accepted it (`remember`), so a
malformed answer is asked again next time instead of being replayed forever.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragstream.common import json_text
from ragstream.common.config import LLMConfig
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import CacheStore
from ragstream.common.text.tokens import DEFAULT_ENCODING, count_tokens, encoding

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a chat format adds around each message (role, separators), as OpenAI counts them."""


def cache_key(model: str, messages: Sequence[ChatMessage], parameters: Mapping[str, object]) -> str:
    """sha256 hex of the canonical JSON of (model, messages, parameters): `json.dumps` of
    {"model", "messages", "parameters"} with sorted keys, compact, not ASCII-escaped. The
    messages (the bulk) are written by `json_text`, which writes strings and lists alike;
    the parameters by `json`, which spells their floats as the keys stored so far have."""
    pairs = [[message.role, message.content] for message in messages]
    settings = json.dumps(
        dict(parameters), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    canonical = (
        f'{{"messages":{json_text.dumps(pairs)},"model":{json_text.dumps(model)},'
        f'"parameters":{settings}}}'
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Reply:
    text: str
    key: str
    cached: bool
    """Served from the cache (no LLM call was made)."""
    cut: bool = False
    """The model stopped at the output limit (finish_reason "length"); unknown, so False,
    for a cached reply."""


class CachedChat:
    """One chat model, its cache, and the token budget of its context window."""

    def __init__(
        self,
        chat: ChatModel,
        cache: CacheStore,
        model_name: str,
        llm: LLMConfig,
        *,
        encoding_name: str = DEFAULT_ENCODING,
    ) -> None:
        self._chat = chat
        self._cache = cache
        self._model = model_name
        self._max_tokens = llm.max_output_tokens
        self._temperature = llm.temperature
        self._encoding = encoding_name
        self.input_budget = llm.context_tokens - llm.max_output_tokens
        """Most prompt tokens that still leave room for a full answer."""

    async def ask(self, messages: Sequence[ChatMessage]) -> Reply:
        parameters = {"max_tokens": self._max_tokens, "temperature": self._temperature}
        key = cache_key(self._model, messages, parameters)
        cached = await self._cache.get(key)
        if cached is not None:
            return Reply(cached, key, cached=True)
        completion = await self._chat.complete(
            messages,
            max_tokens=self._max_tokens,
            temperature=self._temperature,
        )
        return Reply(completion.text, key, cached=False, cut=completion.finish_reason == "length")

    async def remember(self, reply: Reply) -> None:
        """Stores an accepted reply; a reply that came from the cache is not written again."""
        if not reply.cached:
            await self._cache.put(reply.key, reply.text)

    def tokens(self, text: str) -> int:
        return count_tokens(text, self._encoding)

    def prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return sum(self.tokens(m.content) + MESSAGE_OVERHEAD_TOKENS for m in messages)

    def fits(self, messages: Sequence[ChatMessage]) -> bool:
        """Whether the prompt leaves room for a full answer. A token is at least one UTF-8
        byte, so a prompt whose bytes fit needs no tokenizing; only one near the budget is
        counted."""
        bound = sum(len(m.content.encode()) + MESSAGE_OVERHEAD_TOKENS for m in messages)
        return bound <= self.input_budget or self.prompt_tokens(messages) <= self.input_budget

    def truncate(self, text: str, max_tokens: int) -> str:
        """The first `max_tokens` tokens of `text`."""
        codec = encoding(self._encoding)
        tokens = codec.encode_ordinary(text)
        return text if len(tokens) <= max_tokens else codec.decode(tokens[:max_tokens])
