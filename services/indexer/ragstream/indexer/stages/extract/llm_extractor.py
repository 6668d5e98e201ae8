"""The LLM extractor: one extraction call per chunk plus gleaning.

Gleaning continues the conversation ("some entities and relations were missed") up to
`max_gleaning` times, by `extraction.gleaning` policy: `adaptive` (the default) only after
a reply that looks incomplete (see gleaning.py), `always` after every reply, `never`. The
extraction prompt's system message (rules and examples) is the same bytes for every chunk,
and a gleaning prompt starts with its chunk's extraction prompt unchanged, so a server's
prefix cache serves both. A gleaning call whose prompt would leave less than
`llm.max_output_tokens` of the context is skipped with a warning instead of being sent to
fail or be cut off (LightRAG issue #2472). Records of all passes are merged per entity and
per undirected pair; the longer description wins.

Every call goes through the LLM cache; a result lists the cache keys it used, so a chunk can
remember them and a re-index of unchanged text makes no call.
"""

from __future__ import annotations

from ragstream.common.config import LLMConfig
from ragstream.common.config_extraction import ExtractionConfig
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import CacheStore
from ragstream.common.text.tokens import DEFAULT_ENCODING
from ragstream.indexer.stages.extract.gleaning import candidate_names, looks_incomplete
from ragstream.indexer.stages.extract.llm_calls import CachedChat, Reply
from ragstream.indexer.stages.extract.parser import (
    ExtractionFormatError,
    ParseResult,
    parse_extraction,
)
from ragstream.indexer.stages.extract.prompts import (
    extraction_messages,
    gleaning_messages,
)
from ragstream.indexer.stages.extract.records import (
    ExtractionResult,
    merge_entities,
    merge_relations,
)


class LLMExtractor:
    """Entities and relations by an LLM."""

    def __init__(
        self,
        chat: ChatModel,
        cache: CacheStore,
        model_name: str,
        cfg: ExtractionConfig,
        llm: LLMConfig,
        *,
        encoding_name: str = DEFAULT_ENCODING,
    ) -> None:
        self._calls = CachedChat(chat, cache, model_name, llm, encoding_name=encoding_name)
        self._cfg = cfg
        self._name = f"llm:{model_name}"

    @property
    def name(self) -> str:
        return self._name

    async def extract(self, text: str) -> ExtractionResult:
        """Raises ExtractionFormatError when the first answer holds no records at all."""
        messages = extraction_messages(
            text, entity_types=self._cfg.entity_types, language=self._cfg.language
        )
        reply = await self._calls.ask(messages)
        parsed = parse_extraction(reply.text)
        await self._calls.remember(reply)
        passes = [parsed]
        keys = [reply.key]
        warnings = list(parsed.warnings)
        for round_number in range(1, self._rounds + 1):
            entities = merge_entities(*(p.entities for p in passes))
            if not self._worth_gleaning(text, parsed, reply.cut, len(entities)):
                break
            relations = merge_relations(*(p.relations for p in passes))
            conversation = gleaning_messages(messages, entities, relations)
            if not self._calls.fits(conversation):
                warnings.append(
                    f"gleaning pass {round_number} skipped: its prompt would leave no room "
                    "for the answer in the model's context"
                )
                break
            gleaned = await self._glean(conversation, round_number, warnings)
            if gleaned is None:
                break
            reply, parsed = gleaned
            keys.append(reply.key)
            passes.append(parsed)
            if not parsed.entities and not parsed.relations:
                break  # nothing was missed; asking again would only repeat that
        return ExtractionResult(
            entities=merge_entities(*(p.entities for p in passes)),
            relations=merge_relations(*(p.relations for p in passes)),
            cache_keys=tuple(keys),
            warnings=tuple(warnings),
        )

    @property
    def _rounds(self) -> int:
        return 0 if self._cfg.gleaning == "never" else self._cfg.max_gleaning

    def _worth_gleaning(self, text: str, last: ParseResult, cut: bool, entities: int) -> bool:
        """Always, or under `adaptive` only when the last reply looks incomplete."""
        if self._cfg.gleaning == "always":
            return True
        return looks_incomplete(last.complete, cut, entities, candidate_names(text))

    async def _glean(
        self, conversation: list[ChatMessage], round_number: int, warnings: list[str]
    ) -> tuple[Reply, ParseResult] | None:
        reply = await self._calls.ask(conversation)
        try:
            parsed = parse_extraction(reply.text)
        except ExtractionFormatError as exc:
            warnings.append(f"gleaning pass {round_number} ignored: {exc}")
            return None
        await self._calls.remember(reply)
        warnings.extend(f"gleaning pass {round_number}: {w}" for w in parsed.warnings)
        return reply, parsed
