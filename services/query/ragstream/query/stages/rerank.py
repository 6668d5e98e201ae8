"""Reranking the merged chunks of a query with a cross-encoder (docs/architecture.md,
"Query", step 8).

The step never fails a query: without a reranker it is skipped, and a reranker that still
fails after its retries leaves the retrieval order in place; the response's notes say which.
Under load it reranks only the best `degrade_top` chunks (by retrieval order) and appends the
rest unreranked: a query that would otherwise wait behind other reranks, or run past its
deadline, gets most of the gain (the top of a fused list holds most of the relevant chunks)
for a fraction of the cost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, replace

from opentelemetry.trace import Span

from ragstream.common.config_rerank import RerankConfig
from ragstream.common.instruments import record_rerank_degraded
from ragstream.common.providers import ProviderError
from ragstream.common.providers.rerank import Reranker
from ragstream.common.telemetry import annotate
from ragstream.query.lease import remote
from ragstream.query.reranking import SKIPPED_NOTE, LoadSignal, Reranking
from ragstream.query.types import ContextChunk, QueryOptions, QueryState


@dataclass(frozen=True, slots=True)
class RerankOutcome:
    chunks: list[ContextChunk]
    """Best first: reranked chunks carry their rerank score in `score`; chunks left out of a
    degraded rerank follow in retrieval order with their retrieval score."""
    note: str | None = None
    """For the response's notes when the step was skipped, degraded or failed."""


def degraded(load: LoadSignal, cfg: RerankConfig) -> bool:
    """Whether load calls for reranking only the top `degrade_top` chunks."""
    if load.in_flight > cfg.degrade_queue_depth:
        return True
    return load.seconds_left is not None and load.seconds_left < cfg.degrade_deadline_s


def apply_scores(
    chunks: Sequence[ContextChunk], scores: Sequence[float], min_score: float
) -> list[ContextChunk]:
    """`chunks` with their rerank scores, best first (ties keep retrieval order), without
    those scoring below `min_score`. A floor of 0 or less filters nothing: the request field
    cannot tell unset from 0, and some models score relevant text below 0."""
    if len(scores) != len(chunks):
        raise ValueError(f"{len(scores)} scores for {len(chunks)} chunks")
    scored = [replace(chunk, score=score) for chunk, score in zip(chunks, scores, strict=True)]
    scored.sort(key=lambda chunk: -chunk.score)
    if min_score > 0:
        scored = [chunk for chunk in scored if chunk.score >= min_score]
    return scored


async def rerank_chunks(
    reranker: Reranker | None,
    query: str,
    chunks: Sequence[ContextChunk],
    options: QueryOptions,
    load: LoadSignal,
    cfg: RerankConfig,
) -> RerankOutcome:
    """The chunks reordered by the reranker, filtered by `options.min_rerank_score` and cut to
    `options.chunk_top_k` (and `cfg.top_n` when set). Never raises for a reranker failure."""
    keep = options.chunk_top_k
    if not options.enable_rerank or not chunks:
        return RerankOutcome(list(chunks[:keep]))
    if reranker is None:
        return RerankOutcome(list(chunks[:keep]), SKIPPED_NOTE)
    head, tail, note = list(chunks), [], None
    if degraded(load, cfg) and len(chunks) > cfg.degrade_top:
        head, tail = head[: cfg.degrade_top], head[cfg.degrade_top :]
        note = f"rerank degraded: only the top {cfg.degrade_top} reranked (load)"
    try:
        # A rerank must not outlive the query: what time is left bounds all its retries.
        async with remote(), asyncio.timeout(load.seconds_left):
            scores = await reranker.rerank(query, [chunk.content for chunk in head])
    except ProviderError as exc:
        return RerankOutcome(list(chunks[:keep]), f"rerank failed: {exc}; original order kept")
    except TimeoutError:
        reason = f"no answer within the {load.seconds_left or 0:.2f} s left before the deadline"
        return RerankOutcome(list(chunks[:keep]), f"rerank failed: {reason}; original order kept")
    if cfg.top_n:
        keep = min(keep, cfg.top_n)
    ranked = apply_scores(head, scores, options.min_rerank_score) + tail
    return RerankOutcome(ranked[:keep], note)


class RerankStage:
    """The merged chunks reordered by the reranker; degraded near the caller's deadline or
    under load, and the original order kept (with a note) when it fails."""

    name = "rerank"

    def __init__(self, reranking: Reranking | None) -> None:
        self._reranking = reranking

    def applies(self, state: QueryState) -> bool:
        return self._reranking is not None and state.q.options.enable_rerank

    async def run(self, state: QueryState, current: Span) -> None:
        reranking, result = self._reranking, state.result
        assert reranking is not None  # applies() said so
        with reranking.gauge.track(state.q.seconds_left()) as load:
            outcome = await rerank_chunks(
                reranking.reranker,
                state.q.query,
                result.chunks,
                state.q.options,
                load,
                reranking.cfg,
            )
        annotate(current, candidates=len(result.chunks), kept=len(outcome.chunks))
        result.chunks = outcome.chunks
        if outcome.note:
            result.notes.append(outcome.note)
            if outcome.note.startswith("rerank degraded"):
                record_rerank_degraded("load")
            elif outcome.note.startswith("rerank failed"):
                record_rerank_degraded("failed")
