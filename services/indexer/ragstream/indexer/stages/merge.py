"""Stage 2: re-derive a batch of entity and relation keys from the ledger and write them.

The graph-merge topic is keyed by `workspace/key`, so each key has a single writer across
all indexer replicas without locks. One batch (one poll of the topic) costs one set of store
calls per workspace, whatever its size: one ledger read, one check of which of the chunks the
mentions cite still exist (ids only), one read of the stored records, one embedding request
per scheduler batch, and one write per store. A key with no live mentions left is deleted
from the search store and the graph store.

Work a key does not need is skipped: a key whose embedded text is the stored record's keeps
the stored vector, and a summary of a set of fragments that was summarized before is served
by the LLM cache (the summary prompt lists the fragments in a canonical order, so the same
set gives the same prompt whatever order its mentions came in). Writes go graph first, then
search: a search record that is current therefore never sits beside a stale graph entry.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from opentelemetry import context as otel_context
from opentelemetry import trace

from ragstream.common.derive import Draft, joined, merge, needs_summary
from ragstream.common.events import MergeKey
from ragstream.common.models import (
    Collection,
    Mention,
    SearchRecord,
    Vector,
    is_relation_key,
    split_relation_key,
)
from ragstream.common.providers.embedding import Embedder
from ragstream.common.storage.protocols import GraphStore, MentionStore, SearchStore
from ragstream.common.telemetry import annotate, own, span
from ragstream.indexer.resolution.resolver import Resolved, Resolver
from ragstream.indexer.stages.merge_records import Aliases, Merged, embedding_text, merged
from ragstream.indexer.stages.resolve import KeyPlan, ResolvedMerge
from ragstream.indexer.stages.summarize import Summarizer

FollowUps = Callable[[str, set[str]], Awaitable[None]]
"""Publishes (workspace, keys) to the graph-merge topic."""


@dataclass(frozen=True, slots=True)
class MergeConfig:
    max_fragments: int = 8
    max_tokens: int = 1200
    summary_tokens: int = 600
    summary_concurrency: int = 32
    """Summaries of one batch in flight at once."""


class GraphMerger:
    def __init__(
        self,
        mentions: MentionStore,
        search: SearchStore,
        graph: GraphStore,
        embedder: Embedder,
        summarizer: Summarizer,
        cfg: MergeConfig = MergeConfig(),
        resolution: ResolvedMerge | None = None,
        follow_ups: FollowUps | None = None,
    ) -> None:
        """`resolution` merges alias groups (None: each key alone); `follow_ups` publishes
        the keys its changes leave stale, to the graph-merge topic."""
        self._resolver = Resolver(mentions, search)
        self._resolution = resolution
        self._follow_ups = follow_ups
        self._search = search
        self._graph = graph
        self._embedder = embedder
        self._summarizer = summarizer
        self._cfg = cfg
        self._summaries = asyncio.Semaphore(cfg.summary_concurrency)

    async def apply(self, item: MergeKey) -> None:
        """One key on its own (a batch of one)."""
        await self.apply_batch([item])

    async def apply_batch(
        self, items: Sequence[MergeKey], contexts: Sequence[otel_context.Context] = ()
    ) -> None:
        """Merges every key of the batch; `contexts` (one per item) parent each key's span."""
        by_workspace: dict[str, dict[str, otel_context.Context | None]] = defaultdict(dict)
        for index, item in enumerate(items):
            by_workspace[item.workspace][item.key] = contexts[index] if contexts else None
        for workspace, keys in by_workspace.items():
            await self._merge_workspace(workspace, keys)

    async def _plans(self, ws: str, keys: list[str]) -> tuple[dict[str, KeyPlan], Resolved | None]:
        """Each key's mentions: its own live ones, or its group's when resolution is on (whose
        follow-up keys are published before any write: see stages/resolve.py), with the
        groups they rest on."""
        if self._resolution is None:
            live = await self._resolver.live(ws, keys)
            return {key: KeyPlan(live.get(key, [])) for key in keys}, None
        batch = await self._resolution.plan(ws, keys)
        if batch.follow_ups and self._follow_ups is not None:
            await self._follow_ups(ws, batch.follow_ups)
        return batch.keys, batch.resolved

    async def _merge_workspace(self, ws: str, keys: dict[str, otel_context.Context | None]) -> None:
        plans, resolved = await self._plans(ws, list(keys))
        cfg = self._cfg
        merges: list[Merged | None] = []
        summaries: dict[int, tuple[Draft, Aliases, otel_context.Context | None]] = {}
        for key, parent in keys.items():
            plan = plans[key]
            _annotate(parent, ws, key, plan.mentions)
            if not plan.mentions:
                merges.append(None)  # no live mentions: delete the key
                continue
            draft = merge(key, plan.mentions)
            if needs_summary(draft.fragments, cfg.max_fragments, cfg.max_tokens):
                summaries[len(merges)] = draft, plan.aliases, parent
                merges.append(None)
            else:
                merges.append(merged(ws, draft, joined(draft.fragments), plan.aliases))
        # Only the keys that need an LLM summary wait on one; they run concurrently.
        summarized = await asyncio.gather(
            *(self._summarized(ws, *summary) for summary in summaries.values())
        )
        for index, done in zip(summaries, summarized, strict=True):
            merges[index] = done
        upserts = [m for m in merges if m is not None]
        gone = [key for key, m in zip(keys, merges, strict=True) if m is None]
        records = await self._embedded(ws, upserts)
        await self._write(ws, upserts, records, gone)
        resolution = self._resolution
        if resolved is not None and resolution is not None and resolution.concurrent:
            # Groups another consumer changed while this batch merged: merged again (the
            # batch commits after this publish, so a crash before it replays the batch).
            moved = await resolution.moved_since(ws, list(keys), resolved)
            if moved and self._follow_ups is not None:
                await self._follow_ups(ws, moved)

    async def _summarized(
        self, ws: str, draft: Draft, aliases: Aliases, parent: otel_context.Context | None
    ) -> Merged:
        cfg = self._cfg
        label = draft.name or f"{draft.source} / {draft.target}"
        attributes = own(summarizer=self._summarizer.name, fragments=len(draft.fragments))
        async with self._summaries:
            with span("summarize", parent=parent, attributes=attributes):
                description = await self._summarizer.summarize(
                    label, draft.fragments, cfg.summary_tokens
                )
        return merged(ws, draft, description, aliases)

    async def _embedded(self, ws: str, upserts: list[Merged]) -> list[SearchRecord]:
        """The records with their vectors: the stored one when the embedded text is
        unchanged, else a new one, all new ones in one request to the embedding scheduler."""
        stored: dict[tuple[str, str], Vector] = {}
        for collection in (Collection.ENTITIES, Collection.RELATIONS):
            keys = [m.record.id for m in upserts if m.collection is collection]
            for old in await self._search.get(collection, ws, keys):
                stored[old.id, embedding_text(collection, old)] = old.vector
        found = [stored.get((m.record.id, m.embedded)) for m in upserts]
        missing = [m.embedded for m, vector in zip(upserts, found, strict=True) if vector is None]
        new: Iterator[Vector] = iter(await self._embedder.embed(missing) if missing else [])
        return [
            replace(m.record, vector=next(new) if vector is None else vector)
            for m, vector in zip(upserts, found, strict=True)
        ]

    async def _write(
        self, ws: str, upserts: list[Merged], records: list[SearchRecord], gone: list[str]
    ) -> None:
        gone_relations = [key for key in gone if is_relation_key(key)]
        gone_entities = [key for key in gone if not is_relation_key(key)]
        nodes = [m.node for m in upserts if m.node is not None]
        edges = [m.edge for m in upserts if m.edge is not None]
        # Deletes first: deleting a node removes its edges, and an edge upserted by this
        # batch must survive (an entity with no mentions has no relation mentions either).
        await self._graph.delete_edges(ws, [split_relation_key(k) for k in gone_relations])
        await self._graph.delete_nodes(ws, gone_entities)
        await self._graph.upsert_nodes(ws, nodes)
        await self._graph.upsert_edges(ws, edges)
        await self._search.delete(Collection.RELATIONS, ws, gone_relations)
        await self._search.delete(Collection.ENTITIES, ws, gone_entities)
        for collection in (Collection.ENTITIES, Collection.RELATIONS):
            chosen = [
                r for m, r in zip(upserts, records, strict=True) if m.collection is collection
            ]
            await self._search.upsert(collection, chosen)


def _annotate(
    parent: otel_context.Context | None, ws: str, key: str, mentions: list[Mention]
) -> None:
    """Records on the key's own span (its `process` span, when the batch has one per key)
    what its merge found: its kind, its live mentions, and whether it is kept or deleted."""
    if parent is None:
        return
    kind = "relation" if is_relation_key(key) else "entity"
    action = "upsert" if mentions else "delete"
    annotate(
        trace.get_current_span(parent), workspace=ws, kind=kind, mentions=len(mentions),
        action=action,
    )  # fmt: skip
