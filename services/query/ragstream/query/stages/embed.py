"""Embed stage: every text the mode needs (the query, the local and the global keywords) in
one embedding request, through the shared priority scheduler, which also merges concurrent
queries into one batch. If the batch fails, each text is embedded on its own (logged).

The searches' reads that need no vector (their BM25 halves, the entities the keywords name)
start before the request is sent, and run while it is out (prefetch.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Sequence

from opentelemetry.trace import Span

from ragstream.common.models import Vector
from ragstream.common.providers.embedding import Embedder
from ragstream.common.telemetry import annotate
from ragstream.query.lease import remote
from ragstream.query.types import QueryState, SearchStage

log = logging.getLogger(__name__)


class EmbedStage:
    name = "embed"

    def __init__(self, embedder: Embedder, searches: Iterable[SearchStage] = ()) -> None:
        self._embedder = embedder
        self._searches = tuple(searches)
        """The search stages that follow, whose early reads start here."""

    def applies(self, state: QueryState) -> bool:
        return True

    async def run(self, state: QueryState, span: Span) -> None:
        mode, keywords = state.q.options.mode, state.result.keywords
        state.texts = {
            "query": state.hypothetical or state.q.query,
            "low": ", ".join(keywords.low) if mode.searches_entities else "",
            "high": ", ".join(keywords.high) if mode.searches_relations else "",
        }
        state.texts.update({f"sub:{i}": text for i, text in enumerate(state.sub_queries)})
        if state.prefetch is not None:
            running = [stage for stage in self._searches if stage.applies(state)]
            state.prefetch.start([read for stage in running for read in stage.early(state)])
        state.vectors = await embed_all(self._embedder, list(state.texts.values()))
        annotate(span, texts=len(state.vectors))


async def embed_all(embedder: Embedder, texts: Sequence[str]) -> dict[str, Vector]:
    """Each distinct non-empty text's vector, in one request when it succeeds."""
    wanted = [t for t in dict.fromkeys(texts) if t]
    try:
        async with remote():
            return dict(zip(wanted, await embedder.embed(wanted), strict=True))
    except Exception:  # the batch failing must not fail the query; single requests may work
        log.warning("batched query embedding failed; embedding each text on its own", exc_info=True)
    async with remote():
        singles = await asyncio.gather(*(embedder.embed([t]) for t in wanted))
    return {t: v[0] for t, v in zip(wanted, singles, strict=True)}
