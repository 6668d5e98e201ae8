"""The indexer, put together: stage 1 (documents) and stage 2 (graph merges), each a keyed
consumer in its own consumer group (docs/architecture.md, "Indexing").

`build_stages` wires both from the process's `Backends`; `run_stages` runs them until a
stop event; `run_indexer` is `ragstream indexer`: the stages plus a health-only port.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ragstream.common.bus.topics import community_group, merge_group
from ragstream.common.config import Settings
from ragstream.common.events import MergeKey, decode_merge
from ragstream.common.health import HealthServer
from ragstream.common.providers.llm import ChatModel
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import Backends, open_backends
from ragstream.common.signals import stop_on_signals
from ragstream.common.storage.protocols import CacheStore
from ragstream.common.telemetry import telemetry_session
from ragstream.common.text.analyzer import load_segmenter
from ragstream.common.text.tokens import DEFAULT_ENCODING, encoding
from ragstream.indexer.backlog import documents_drained, indexing_drained
from ragstream.indexer.batch_consumer import ApplyBatch, BatchConsumer
from ragstream.indexer.community_consumer import CommunityConsumer, publishing_merged
from ragstream.indexer.consumer import (
    ConsumeLoop,
    abandon_on_rebalance,
    document_consumer,
)
from ragstream.indexer.documents import DocumentIndexer
from ragstream.indexer.members import first_set, run_members, started_here
from ragstream.indexer.resolution.judge import SameAsJudge
from ragstream.indexer.resolution.names import NameIndex
from ragstream.indexer.resolution.resolver import Check, Resolver
from ragstream.indexer.stages.communities import CommunityMaintainer
from ragstream.indexer.stages.community_reports import (
    ExtractiveReportWriter,
    LLMReportWriter,
    ReportWriter,
)
from ragstream.indexer.stages.community_write import CommunityWriter
from ragstream.indexer.stages.extract.llm_calls import CachedChat
from ragstream.indexer.stages.extract.llm_extractor import LLMExtractor
from ragstream.indexer.stages.extract.mentions import MentionExtraction
from ragstream.indexer.stages.extract.nlp_extractor import NLPExtractor
from ragstream.indexer.stages.extract.nlp_model import load_tagger
from ragstream.indexer.stages.extract.records import Extractor
from ragstream.indexer.stages.ledger import Ledger
from ragstream.indexer.stages.merge import FollowUps, GraphMerger, MergeConfig
from ragstream.indexer.stages.resolve import ResolvedMerge
from ragstream.indexer.stages.summarize import LLMSummarizer, Summarizer, TruncatingSummarizer

log = logging.getLogger(__name__)
Stages = tuple[ConsumeLoop[Any, Any], ...]


def build_extractor(
    settings: Settings, cache: CacheStore, chat: ChatModel | None
) -> tuple[Extractor, Summarizer]:
    """The LLM extractor when an LLM is configured, else the offline NLP extractor (with the
    packaged named-entity model when it is installed)."""
    if chat is None:
        return NLPExtractor(load_tagger()), TruncatingSummarizer()
    model, extraction = settings.llm.model, settings.extraction
    llm = LLMExtractor(chat, cache, model, extraction, settings.llm)
    return llm, LLMSummarizer(chat, cache, model, settings.llm, language=extraction.language)


def build_report_writer(
    settings: Settings, cache: CacheStore, chat: ChatModel | None
) -> ReportWriter:
    """Community reports by the LLM when one is configured, else extractive ones."""
    if chat is None:
        return ExtractiveReportWriter()
    return LLMReportWriter(chat, cache, settings.llm.model, settings.llm)


def build_stages(settings: Settings, backends: Backends) -> Stages:
    """Stage 1 (documents) and stage 2 (graph merges, then communities), each its own
    consumer group."""
    stores, bus, topics, providers = (
        backends.stores,
        backends.bus,
        backends.topics,
        backends.providers,
    )
    extractor, summarizer = build_extractor(settings, stores.cache, providers.chat)
    indexer = DocumentIndexer(
        stores.docs,
        stores.search,
        providers.embeddings.view(Priority.INDEXING),
        settings.chunking,
        MentionExtraction(extractor, settings.indexer.concurrency),
        Ledger(stores.mentions, bus.publisher, topics.graph_merge, settings.resolution.enabled),
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
        *resolution(settings, backends),
    )
    merges = BatchConsumer(
        bus.consumer(merge_group(settings.bus.group_id), [topics.graph_merge]),
        bus.publisher,
        topics.documents_dlt,
        decode_merge,
        merge_then_communities(merger.apply_batch, settings, backends),
        settings.indexer.model_copy(update={"batch_size": settings.indexer.merge_batch_size}),
        settle=documents_drained(
            bus, topics, settings.bus.group_id, settings.indexer.merge_settle_s
        ),
    )
    if not settings.communities.enabled:
        return documents, merges
    return documents, merges, community_stage(settings, backends)


def resolution(
    settings: Settings, backends: Backends
) -> tuple[ResolvedMerge | None, FollowUps | None]:
    """Stage 2's entity resolution and the publisher of its follow-up keys, when it is on."""
    if not settings.resolution.enabled:
        return None, None
    stores = backends.stores
    resolver = Resolver(
        stores.mentions, stores.search, settings.resolution.max_group, check(settings, backends)
    )
    ledger = Ledger(stores.mentions, backends.bus.publisher, backends.topics.graph_merge)
    concurrent = settings.bus.backend == "kafka" or settings.indexer.processes > 1
    return ResolvedMerge(resolver, stores.search, stores.graph, concurrent), ledger.publish


def check(settings: Settings, backends: Backends) -> Check | None:
    """The LLM check of near names, when it is on and an LLM is configured."""
    chat, cfg = backends.providers.chat, settings.resolution
    if chat is None or not cfg.check:
        return None
    stores, model = backends.stores, settings.llm.model
    embedder = backends.providers.embeddings.view(Priority.MERGE)
    names = NameIndex(stores.search, embedder, cfg.check_similarity, cfg.check_neighbours)
    asked = CachedChat(chat, stores.cache, model, settings.llm)
    return Check(names, SameAsJudge(asked, stores.cache, model, cfg.check_batch))


def merge_then_communities(
    apply: ApplyBatch[MergeKey], settings: Settings, backends: Backends
) -> ApplyBatch[MergeKey]:
    """Stage 2's apply, publishing its keys for the community step when communities are on."""
    if not settings.communities.enabled:
        return apply
    return publishing_merged(apply, backends.bus.publisher, backends.topics.communities)


def community_stage(settings: Settings, backends: Backends) -> CommunityConsumer:
    """The community step: the one consumer of a workspace's partition of its topic."""
    stores, providers = backends.stores, backends.providers
    reports = build_report_writer(settings, stores.cache, providers.chat)
    embedder = providers.embeddings.view(Priority.MERGE)
    writer = CommunityWriter(stores.graph, stores.communities, stores.search, embedder, reports)
    maintainer = CommunityMaintainer(stores.graph, stores.communities, writer, settings.communities)
    topics = backends.topics
    stage = CommunityConsumer(
        backends.bus.consumer(community_group(settings.bus.group_id), [topics.communities]),
        backends.bus.publisher,
        topics.documents_dlt,
        decode_merge,
        maintainer.apply_batch,
        settings.indexer.model_copy(update={"batch_size": settings.communities.batch_size}),
        settle=indexing_drained(
            backends.bus,
            topics,
            settings.bus.group_id,
            settings.communities.settle_s,
            settings.communities.busy_share,
        ),
    )
    stage.on_reassigned(maintainer.forget)
    return stage


async def run_stages(
    settings: Settings,
    backends: Backends,
    stop: asyncio.Event,
    ready: asyncio.Event | None = None,
) -> None:
    """Both indexing stages until `stop`; each finishes its batch, commits and closes.
    With `indexer.processes` above 1 on the embedded bus, the other indexer processes run
    meanwhile (members.py), and `ready` waits for them too.

    First the text tools are loaded on a worker thread (the token encodings, jieba's
    dictionary and, without an LLM, the named-entity model: 0.5 s and about 2 s of CPU), so
    that neither a document nor the event loop waits for them; `ready` is set when the
    stages start consuming.
    """
    members_ready = asyncio.Event()
    async with asyncio.TaskGroup() as members:
        if started_here(settings):
            members.create_task(run_members(settings, stop, members_ready))
        else:
            members_ready.set()
        await asyncio.to_thread(load_text_tools, settings)
        stages = build_stages(settings, backends)
        try:
            async with asyncio.TaskGroup() as group:
                if ready is not None:
                    group.create_task(_set_when_ready(members_ready, ready, stop))
                for stage in stages:
                    abandon_on_rebalance(stage)
                    group.create_task(stage.run(stop))
        finally:
            for stage in stages:
                await stage.close()


async def _set_when_ready(
    members: asyncio.Event, ready: asyncio.Event, stop: asyncio.Event
) -> None:
    """Sets `ready` once the other processes consume too (or never, if `stop` comes first)."""
    if await first_set(members, stop) is members:
        ready.set()


def load_text_tools(settings: Settings) -> None:
    """What chunking, prompt budgets, BM25 analysis and the offline extractor load on first
    use (each loaded once per process)."""
    for name in {settings.chunking.encoding, DEFAULT_ENCODING}:
        encoding(name)
    load_segmenter()
    if settings.llm.provider == "none":
        load_tagger()


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
