"""Builds the indexing stages and the query engine from opened backends.

The one place where the pieces meet: the extractor and summarizer chosen by whether an
LLM is configured, the two keyed consumers of the indexer, the query engine.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from ragstream.common.bus.factory import Bus
from ragstream.common.bus.topics import Topics
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange, MergeKey, decode_merge
from ragstream.common.models import Chunk, Mention
from ragstream.common.providers.llm import ChatModel
from ragstream.common.providers.rerank import Reranker
from ragstream.common.providers.scheduler import EmbeddingScheduler, Priority
from ragstream.indexer.consumer import KeyedConsumer, document_consumer
from ragstream.indexer.documents import DocumentIndexer
from ragstream.indexer.stages.extract.llm_extractor import LLMExtractor
from ragstream.indexer.stages.extract.mentions import to_mentions
from ragstream.indexer.stages.extract.names import entity_key
from ragstream.indexer.stages.extract.nlp_extractor import NLPExtractor
from ragstream.indexer.stages.extract.records import Extractor
from ragstream.indexer.stages.ledger import ExtractMentions, Ledger
from ragstream.indexer.stages.merge import GraphMerger, Summarizer, TruncatingSummarizer
from ragstream.query.engine import QueryEngine
from ragstream.query.stages.context import QueryStores, Reranking
from ragstream.query.stages.rerank import RerankGauge

log = logging.getLogger(__name__)
MERGE_GROUP_SUFFIX = ".graph-merge"
SETTLE_POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class Providers:
    embeddings: EmbeddingScheduler
    """Shared by every stage; each gets a view with its own priority."""
    chat: ChatModel | None
    reranker: Reranker | None = None


class LLMSummarizer:
    """Stage 2's summaries by the LLM extractor (cached, map-reduce when long)."""

    def __init__(self, extractor: LLMExtractor) -> None:
        self._extractor = extractor
        self.name = extractor.name

    async def summarize(self, label: str, fragments: Sequence[str], max_tokens: int) -> str:
        result = await self._extractor.summarize(label, fragments, max_tokens=max_tokens)
        return result.text


def build_extractor(
    settings: Settings, stores: QueryStores, chat: ChatModel | None
) -> tuple[Extractor, Summarizer]:
    """The LLM extractor when an LLM is configured, else the offline NLP extractor."""
    if chat is None:
        return NLPExtractor(), TruncatingSummarizer()
    llm = LLMExtractor(chat, stores.cache, settings.llm.model, settings.extraction, settings.llm)
    return llm, LLMSummarizer(llm)


def mention_extractor(extractor: Extractor) -> ExtractMentions:
    async def extract(chunk: Chunk) -> list[Mention]:
        result = await extractor.extract(chunk.content)
        return to_mentions(chunk, result.entities, result.relations, entity_key)

    return extract


def build_engine(settings: Settings, stores: QueryStores, providers: Providers) -> QueryEngine:
    reranking = None
    if providers.reranker is not None:
        reranking = Reranking(providers.reranker, settings.rerank, RerankGauge())
    return QueryEngine(
        stores,
        providers.embeddings.view(Priority.QUERY),
        providers.chat,
        candidates=settings.query.candidates,
        rrf_k=settings.query.rrf_k,
        reranking=reranking,
    )


def documents_drained(
    bus: Bus, group_id: str, topic: str, limit_s: float
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """Waits (at most limit_s) until the document stage has committed everything queued."""

    async def settle(stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        # Polls: committed offsets live in the bus, which signals nothing when they move.
        while not stop.is_set() and loop.time() < deadline:
            try:
                if await bus.pending(group_id, [topic]) == 0:
                    return
            except Exception as exc:  # noqa: BLE001 - only an optimization: merge now instead
                log.debug("document backlog unknown (%s); merging without waiting", exc)
                return
            await asyncio.sleep(SETTLE_POLL_S)

    return settle


def build_stage_consumers(
    settings: Settings, stores: QueryStores, bus: Bus, providers: Providers, topics: Topics
) -> tuple[KeyedConsumer[DocumentChange], KeyedConsumer[MergeKey]]:
    """Stage 1 (documents) and stage 2 (graph merges), each its own consumer group."""
    extractor, summarizer = build_extractor(settings, stores, providers.chat)
    ledger = Ledger(
        stores.mentions,
        mention_extractor(extractor),
        bus.publisher,
        topics.graph_merge,
        settings.indexer.concurrency,
    )
    indexer = DocumentIndexer(
        stores.docs,
        stores.search,
        providers.embeddings.view(Priority.INDEXING),
        settings.chunking,
        ledger,
    )
    documents = document_consumer(
        bus.consumer(settings.bus.group_id, [topics.documents]),
        bus.publisher,
        topics.documents_dlt,
        indexer.apply,
        settings.indexer,
    )
    merger = GraphMerger(
        stores.mentions,
        stores.search,
        stores.graph,
        providers.embeddings.view(Priority.MERGE),
        summarizer,
    )
    merges = KeyedConsumer(
        bus.consumer(settings.bus.group_id + MERGE_GROUP_SUFFIX, [topics.graph_merge]),
        bus.publisher,
        topics.documents_dlt,
        decode_merge,
        merger.apply,
        settings.indexer.model_copy(
            update={
                "concurrency": settings.indexer.merge_concurrency,
                "batch_size": settings.indexer.merge_batch_size,
            }
        ),
        latest_only=True,
        settle=documents_drained(
            bus, settings.bus.group_id, topics.documents, settings.indexer.merge_settle_s
        ),
    )
    return documents, merges
