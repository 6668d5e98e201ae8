"""Stage 2, per entity or relation key: re-derive it from the ledger and write it everywhere.

The graph-merge topic is keyed by `workspace/key`, so each key has a single writer across
all indexer replicas without locks. A key with no mentions left is deleted from the search
store and the graph store.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ragstream.common.derive import Draft, joined, merge, needs_summary, truncated
from ragstream.common.events import MergeKey
from ragstream.common.models import (
    Collection,
    GraphEdge,
    GraphNode,
    Mention,
    SearchRecord,
    Vector,
    is_relation_key,
    split_relation_key,
)
from ragstream.common.providers.embedding import Embedder
from ragstream.common.storage.protocols import GraphStore, MentionStore, SearchStore
from ragstream.common.telemetry import annotate, own, span
from ragstream.common.text.analyzer import analyze


def relation_embedding_text(keywords: str, source: str, target: str, description: str) -> str:
    """What a relation's vector is made from (LightRAG's recipe): keywords, both endpoints,
    then the description. `ragstream reindex` re-embeds relations with the same text."""
    return f"{keywords}\t{source}\n{target}\n{description}"


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


@dataclass(frozen=True, slots=True)
class MergeConfig:
    max_fragments: int = 8
    max_tokens: int = 1200
    summary_tokens: int = 600


class GraphMerger:
    def __init__(
        self,
        mentions: MentionStore,
        search: SearchStore,
        graph: GraphStore,
        embedder: Embedder,
        summarizer: Summarizer,
        cfg: MergeConfig = MergeConfig(),
    ) -> None:
        self._mentions = mentions
        self._search = search
        self._graph = graph
        self._embedder = embedder
        self._summarizer = summarizer
        self._cfg = cfg

    async def apply(self, item: MergeKey) -> None:
        relation = is_relation_key(item.key)
        attributes = own(workspace=item.workspace, kind="relation" if relation else "entity")
        with span("merge", attributes=attributes) as current:
            mentions = await self._live_mentions(item.workspace, item.key)
            annotate(current, mentions=len(mentions), action="upsert" if mentions else "delete")
            await self._apply(item, relation, mentions)

    async def _apply(self, item: MergeKey, relation: bool, mentions: list[Mention]) -> None:
        ws, key = item.workspace, item.key
        if not mentions:
            if relation:
                await self._search.delete(Collection.RELATIONS, ws, [key])
                await self._graph.delete_edges(ws, [split_relation_key(key)])
            else:
                await self._search.delete(Collection.ENTITIES, ws, [key])
                await self._graph.delete_nodes(ws, [key])
            return
        draft = merge(key, mentions)
        description = await self._describe(draft)
        if relation:
            await self._write_relation(ws, draft, description)
        else:
            await self._write_entity(ws, draft, description)

    async def _live_mentions(self, ws: str, key: str) -> list[Mention]:
        """The key's mentions whose chunk still exists (see stages/ledger.py for why)."""
        mentions = (await self._mentions.mentions_of(ws, [key])).get(key, [])
        chunk_ids = list(dict.fromkeys(m.chunk_id for m in mentions))
        live = {r.id for r in await self._search.get(Collection.CHUNKS, ws, chunk_ids)}
        return [m for m in mentions if m.chunk_id in live]

    async def _describe(self, draft: Draft) -> str:
        cfg = self._cfg
        if not needs_summary(draft.fragments, cfg.max_fragments, cfg.max_tokens):
            return joined(draft.fragments)
        label = draft.name or f"{draft.source} / {draft.target}"
        attributes = own(summarizer=self._summarizer.name, fragments=len(draft.fragments))
        with span("summarize", attributes=attributes):
            return await self._summarizer.summarize(label, draft.fragments, cfg.summary_tokens)

    async def _embed(self, text: str) -> Vector:
        vector: Vector = (await self._embedder.embed([text]))[0]
        return vector

    async def _write_entity(self, ws: str, draft: Draft, description: str) -> None:
        text = f"{draft.name}\n{description}"
        record = SearchRecord(
            id=draft.key,
            workspace=ws,
            text=text,
            terms=tuple(analyze(text)),
            vector=await self._embed(text),
            doc_ids=draft.doc_ids,
            attrs={
                "name": draft.name,
                "type": draft.type,
                "description": description,
                "source_ids": list(draft.chunk_ids),
                "file_paths": list(draft.file_paths),
            },
        )
        await self._search.upsert(Collection.ENTITIES, [record])
        node = GraphNode(
            draft.key, draft.name, draft.type, description, draft.chunk_ids, draft.doc_ids
        )
        await self._graph.upsert_nodes(ws, [node])

    async def _write_relation(self, ws: str, draft: Draft, description: str) -> None:
        embedded = relation_embedding_text(draft.keywords, draft.source, draft.target, description)
        record = SearchRecord(
            id=draft.key,
            workspace=ws,
            text=description,
            terms=tuple(analyze(f"{draft.keywords} {draft.source} {draft.target} {description}")),
            vector=await self._embed(embedded),
            doc_ids=draft.doc_ids,
            attrs={
                "source": draft.source,
                "target": draft.target,
                "keywords": draft.keywords,
                "description": description,
                "weight": draft.weight,
                "source_ids": list(draft.chunk_ids),
                "file_paths": list(draft.file_paths),
            },
        )
        await self._search.upsert(Collection.RELATIONS, [record])
        edge = GraphEdge(
            draft.source, draft.target, draft.keywords, description, draft.weight,
            draft.chunk_ids, draft.doc_ids,
        )  # fmt: skip
        await self._graph.upsert_edges(ws, [edge])
