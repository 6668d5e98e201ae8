"""Keywords stage: high-level (themes) and low-level (names, things) keywords of a query.

From the LLM as JSON (repaired when malformed, cached), from the caller, or, offline,
derived from the query itself: the graph's entity names that occur in the question are
its low-level keywords, and its remaining content words are both levels' fallback.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence

from opentelemetry.trace import Span

from ragstream.common.models import Collection
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.providers.reply_json import json_object
from ragstream.common.storage.protocols import CacheStore, SearchStore
from ragstream.common.telemetry import annotate
from ragstream.common.text.analyzer import CHINESE_STOPWORDS, ENGLISH_STOPWORDS, analyze
from ragstream.common.text.names import name_pattern
from ragstream.query.lease import remote
from ragstream.query.search import SearchSpec, hybrid_search
from ragstream.query.types import Keywords, Mode, QueryState

NO_KEYWORDS_NOTE = "no usable keywords: the question names nothing the index could look up"
_WORD = re.compile(r"[\w][\w'-]*", re.UNICODE)
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
STOPWORDS = ENGLISH_STOPWORDS | CHINESE_STOPWORDS
OFFLINE_NAME_CANDIDATES = 30
"""Entities the offline path searches for names that occur in the question."""

KEYWORDS_PROMPT = """Extract search keywords from the user's question for a knowledge-graph search.
Return only a JSON object, no prose, in this form:
{{"high_level_keywords": [...], "low_level_keywords": [...]}}
- high_level_keywords: overarching themes, concepts or questions (2-5 items).
- low_level_keywords: specific entities, names, products, places, dates or terms (2-8 items).
Use the language of the question. If the question has no meaningful content, return empty lists.

Question: {query}"""


def content_words(query: str) -> list[str]:
    """The query's words minus stopwords and very short tokens, in order, without repeats."""
    words: list[str] = []
    for word in _WORD.findall(query):
        # Chinese runs are segmented by the analyzer (jieba); other words are kept as typed.
        parts = analyze(word) if _HAN.search(word) else [word]
        words.extend(p for p in parts if p.casefold() not in STOPWORDS and len(p) > 1)
    return list(dict.fromkeys(words))


def offline_keywords(query: str, entity_names: Sequence[str]) -> Keywords:
    """Entity names found in the query (low level) and the query's content words (high)."""
    names = [n for n in dict.fromkeys(entity_names) if n and _names_in(n, query)]
    # A longer name that contains a shorter one ("Tern S3" vs "Tern") makes it redundant.
    names = [n for n in names if not any(n != m and n.casefold() in m.casefold() for m in names)]
    words = content_words(query)
    return Keywords(high=tuple(words), low=tuple(names) or tuple(words))


def _names_in(name: str, query: str) -> bool:
    """Whether the query names this entity: a whole-word match, ignoring case for names of
    several words ("Lothair Ii's" names "Lothair II"), but respecting it for one word, so
    "the place of birth" does not name a film called "Place"."""
    one_word = " " not in name.strip() and not _HAN.search(name)
    return re.search(name_pattern(name), query, 0 if one_word else re.IGNORECASE) is not None


def parse_keywords(text: str) -> Keywords:
    """Keywords from the model's reply; tolerant of code fences, prose and trailing commas."""
    data = json_object(text)
    if data is None:
        return Keywords()
    return Keywords(
        high=_strings(data.get("high_level_keywords")), low=_strings(data.get("low_level_keywords"))
    )


def _strings(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(str(v).strip() for v in value if str(v).strip()))


async def llm_keywords(chat: ChatModel, cache: CacheStore, query: str) -> Keywords:
    messages = [ChatMessage("user", KEYWORDS_PROMPT.format(query=query))]
    key = (
        "keywords:"
        + hashlib.sha256(json.dumps([chat.name, query, KEYWORDS_PROMPT]).encode()).hexdigest()
    )
    cached = await cache.get(key)
    if cached is None:
        async with remote():
            cached = (await chat.complete(messages, temperature=0.0)).text
        await cache.put(key, cached)
    return parse_keywords(cached)


class KeywordStage:
    """The caller's keywords when given, else the LLM's, else the offline ones."""

    name = "keywords"

    def __init__(self, chat: ChatModel | None, cache: CacheStore, search: SearchStore) -> None:
        self._chat = chat
        self._cache = cache
        self._search = search

    def applies(self, state: QueryState) -> bool:
        return state.q.options.mode is not Mode.NAIVE

    async def run(self, state: QueryState, span: Span) -> None:
        keywords = await self._keywords(state)
        state.result.keywords = keywords
        annotate(span, high=len(keywords.high), low=len(keywords.low))
        if not keywords.high and not keywords.low:
            state.result.notes.append(NO_KEYWORDS_NOTE)

    async def _keywords(self, state: QueryState) -> Keywords:
        q = state.q
        if q.options.hl_keywords or q.options.ll_keywords:
            return Keywords(high=q.options.hl_keywords, low=q.options.ll_keywords)
        if self._chat is not None:
            return await llm_keywords(self._chat, self._cache, q.query)
        # Within the filter: names of entities outside it must not become keywords.
        spec = SearchSpec(
            q.workspace,
            analyze(q.query),
            None,
            state.search_filter(),
            OFFLINE_NAME_CANDIDATES,
            OFFLINE_NAME_CANDIDATES,
        )
        hits = await hybrid_search(self._search, Collection.ENTITIES, spec)
        return offline_keywords(q.query, [n for h in hits for n in _names(h.record.attrs)])


def _names(attrs: Mapping[str, object]) -> list[str]:
    """An entity's name and its aliases: a question may name a merged entity by any of
    them ("Etienne de Crecy" for a group named otherwise)."""
    aliases = attrs.get("aliases")
    return [str(attrs.get("name", "")), *(map(str, aliases) if isinstance(aliases, list) else ())]
