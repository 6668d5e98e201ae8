"""The indexer, put together: stage 1 (documents) and stage 2 (graph merges), each a keyed
consumer in its own consumer group (docs/architecture.md, "Indexing").

`build_stages` wires both from the process's `Backends`; `run_stages` runs them until a
stop event; `run_indexer` is `ragstream indexer`: the stages plus a health-only port.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ragstream.common.bus.progress import indexing_progress
from ragstream.common.bus.topics import merge_group
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange, MergeKey, decode_merge
from ragstream.common.health import HealthServer
from ragstream.common.models import Chunk, Mention
from ragstream.common.providers.llm import ChatModel
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import Backends, open_backends
from ragstream.common.signals import stop_on_signals
from ragstream.common.storage.protocols import CacheStore
from ragstream.common.telemetry import telemetry_session
from ragstream.common.text.analyzer import load_segmenter
from ragstream.common.text.tokens import DEFAULT_ENCODING, encoding
from ragstream.indexer.batch_consumer import BatchConsumer
from ragstream.indexer.consumer import ConsumeLoop, KeyedConsumer, document_consumer
from ragstream.indexer.documents import DocumentIndexer
from ragstream.indexer.stages.extract.llm_extractor import LLMExtractor
from ragstream.indexer.stages.extract.mentions import to_mentions
from ragstream.indexer.stages.extract.names import entity_key
from ragstream.indexer.stages.extract.nlp_extractor import NLPExtractor
from ragstream.indexer.stages.extract.records import Extractor
from ragstream.indexer.stages.ledger import ExtractMentions, Ledger
from ragstream.indexer.stages.merge import (
    GraphMerger,
    MergeConfig,
    Summarizer,
    TruncatingSummarizer,
)

log = logging.getLogger(__name__)
SETTLE_POLL_S = 0.2
Stages = tuple[KeyedConsumer[DocumentChange], BatchConsumer[MergeKey]]


class LLMSummarizer:
    """Stage 2's summaries by the LLM extractor (cached, map-reduce when long)."""

    def __init__(self, extractor: LLMExtractor) -> None:
        self._extractor = extractor
        self.name = extractor.name

    async def summarize(self, label: str, fragments: Sequence[str], max_tokens: int) -> str:
        result = await self._extractor.summarize(label, fragments, max_tokens=max_tokens)
        return result.text


def build_extractor(
    settings: Settings, cache: CacheStore, chat: ChatModel | None
) -> tuple[Extractor, Summarizer]:
    """The LLM extractor when an LLM is configured, else the offline NLP extractor."""
    if chat is None:
        return NLPExtractor(), TruncatingSummarizer()
    llm = LLMExtractor(chat, cache, settings.llm.model, settings.extraction, settings.llm)
    return llm, LLMSummarizer(llm)


def mention_extractor(extractor: Extractor) -> ExtractMentions:
    async def extract(chunk: Chunk) -> list[Mention]:
        result = await extractor.extract(chunk.content)
        return to_mentions(chunk, result.entities, result.relations, entity_key)

    return extract


def documents_drained(
    settings: Settings, backends: Backends
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """Waits (at most indexer.merge_settle_s) until stage 1 has committed everything queued,
    so that a burst of documents touching one key merges it once."""
    limit_s = settings.indexer.merge_settle_s

    async def settle(stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        # Polls: committed offsets live in the bus, which signals nothing when they move.
        while not stop.is_set() and loop.time() < deadline:
            try:
                progress = await indexing_progress(
                    backends.bus, backends.topics, settings.bus.group_id
                )
            except Exception as exc:  # noqa: BLE001 - only an optimization: merge now instead
                log.debug("document backlog unknown (%s); merging without waiting", exc)
                return
            if progress.documents == 0:
                return
            await asyncio.sleep(SETTLE_POLL_S)

    return settle


def build_stages(settings: Settings, backends: Backends) -> Stages:
    """Stage 1 (documents) and stage 2 (graph merges), each its own consumer group."""
    stores, bus, topics, providers = (
        backends.stores,
        backends.bus,
        backends.topics,
        backends.providers,
    )
    extractor, summarizer = build_extractor(settings, stores.cache, providers.chat)
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
        MergeConfig(summary_concurrency=settings.indexer.merge_concurrency),
    )
    merges = BatchConsumer(
        bus.consumer(merge_group(settings.bus.group_id), [topics.graph_merge]),
        bus.publisher,
        topics.documents_dlt,
        decode_merge,
        merger.apply_batch,
        settings.indexer.model_copy(update={"batch_size": settings.indexer.merge_batch_size}),
        settle=documents_drained(settings, backends),
    )
    return documents, merges


async def run_stages(
    settings: Settings,
    backends: Backends,
    stop: asyncio.Event,
    ready: asyncio.Event | None = None,
) -> None:
    """Both indexing stages until `stop`; each finishes its batch, commits and closes.

    First the text tools are loaded on a worker thread (the token encodings and jieba's
    dictionary, about half a second of CPU), so that no document waits for them; `ready` is
    set when the stages start consuming.
    """
    await asyncio.to_thread(load_text_tools, settings)
    stages = build_stages(settings, backends)
    if ready is not None:
        ready.set()
    try:
        async with asyncio.TaskGroup() as group:
            for stage in stages:
                abandon_on_rebalance(stage)
                group.create_task(stage.run(stop))
    finally:
        for stage in stages:
            await stage.close()


def load_text_tools(settings: Settings) -> None:
    """What chunking, prompt budgets and BM25 analysis load on first use."""
    for name in {settings.chunking.encoding, DEFAULT_ENCODING}:
        encoding(name)
    load_segmenter()


def abandon_on_rebalance(keyed: ConsumeLoop[Any, Any]) -> None:
    """A Kafka group member abandons its batch when a rebalance cannot wait for it (the
    embedded log has one member and no rebalances)."""
    on_abandon = getattr(keyed.consumer, "on_abandon", None)
    if on_abandon is not None:
        on_abandon(keyed.abandon_in_flight)


async def run_indexer(settings: Settings, health_listen: str) -> None:
    """The indexer alone (`ragstream indexer`), one member of the consumer group.

    SIGINT or SIGTERM stops fetching; the batch in flight is finished and committed (a
    record still failing stays uncommitted for the next owner), then the process leaves the
    group and exits. grpc.health.v1 answers on `health_listen` meanwhile.
    """
    stop = stop_on_signals()
    telemetry = telemetry_session("ragstream-indexer", settings.bus.backend)
    async with telemetry, open_backends(settings) as backends:
        health = HealthServer(health_listen)
        await health.start()
        print(f"ragstream indexer health on {health_listen} (port {health.port})", flush=True)
        try:
            await run_stages(settings, backends, stop)
            log.info("indexer stopped; leaving the consumer group")
        finally:
            await health.stop(grace_s=1.0)
