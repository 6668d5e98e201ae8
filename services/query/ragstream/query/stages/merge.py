"""Merge stage (timed as "fuse"): the chunk sources (the chunk search first, then the
entities' and the relations' chunks) merged round-robin, each chunk once, and cited: the
source passages numbered in order of first appearance (query/citations.py)."""

from __future__ import annotations

from opentelemetry.trace import Span

from ragstream.common.models import Provenance, SearchRecord
from ragstream.common.storage.protocols import SearchStore
from ragstream.common.telemetry import annotate
from ragstream.common.text.tokens import count_tokens
from ragstream.query.citations import cite
from ragstream.query.fusion import round_robin
from ragstream.query.reranking import SKIPPED_NOTE, Reranking
from ragstream.query.search import chunk_records
from ragstream.query.types import ContextChunk, QueryState


class MergeSources:
    name = "fuse"

    def __init__(self, store: SearchStore, reranking: Reranking | None) -> None:
        self._store = store
        self._reranking = reranking

    def applies(self, state: QueryState) -> bool:
        return True

    async def run(self, state: QueryState, current: Span) -> None:
        q, result = state.q, state.result
        # A reranker gets a wider pool to choose from; the cut to chunk_top_k follows it.
        pool = q.options.chunk_top_k
        if self._reranking is not None and q.options.enable_rerank:
            pool = max(pool, self._reranking.pool)
        elif q.options.enable_rerank:
            result.notes.append(SKIPPED_NOTE)
        naive = state.chunk_hits
        merged = round_robin([[h.record.id for h in naive], *state.graph_sources])[:pool]
        records = {h.record.id: h.record for h in naive}
        records |= await chunk_records(
            self._store, q.workspace, [i for i in merged if i not in records]
        )
        scores = {h.record.id: h.score for h in naive}
        hits = [(records[i], scores.get(i, 0.0)) for i in merged if i in records]
        result.chunks, result.references = cite([context_chunk(r, s) for r, s in hits])
        annotate(current, chunks=len(result.chunks), references=len(result.references))


def context_chunk(record: SearchRecord, score: float) -> ContextChunk:
    doc_id = record.doc_ids[0] if record.doc_ids else ""
    path = str(record.attrs.get("file_path", ""))
    tokens = int(record.attrs.get("tokens", 0)) or count_tokens(record.text)
    title = record.metadata.get("title", "")
    return ContextChunk(
        record.id, doc_id, path, record.text, score, tokens, "", title, Provenance.of(record.attrs)
    )
