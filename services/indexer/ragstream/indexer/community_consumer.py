"""The community step's consumer, and the hand-off from stage 2 to it.

Stage 2's topic is keyed by entity or relation key, so one workspace's merges are spread over
partitions and consumers: no stage-2 consumer may own a workspace's partition of the graph
into communities. So after each applied merge batch its keys are published again to the
communities topic keyed by workspace alone (`encode_community`): all of a workspace's events
sit in one partition, and the one consumer that owns that partition is the single writer of
the workspace's communities. Unlike stage 2, whose keys are re-derived from state so that
only a key's last record matters, every record here adds a key to re-optimize around: one
poll is applied as the union of its keys.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

from opentelemetry import context as otel_context

from ragstream.common.bus.protocols import BusRecord, Publisher
from ragstream.common.events import MergeKey, encode_community
from ragstream.common.telemetry import own, span, trace_headers
from ragstream.indexer.batch_consumer import ApplyBatch, offset_ranges
from ragstream.indexer.consumer import ConsumeLoop

log = logging.getLogger(__name__)


def publishing_merged(
    apply: ApplyBatch[MergeKey], publisher: Publisher, topic: str
) -> ApplyBatch[MergeKey]:
    """Stage 2's `apply`, then its keys published for the community step. Stage 2 commits
    only after both, so a crash in between merges and publishes the batch again: the
    community step is state-based, and a key seen twice costs nothing more."""

    async def apply_and_publish(
        items: Sequence[MergeKey], contexts: Sequence[otel_context.Context]
    ) -> None:
        await apply(items, contexts)
        traced = trace_headers()
        await publisher.publish(topic, [encode_community(item, traced) for item in items])

    return apply_and_publish


class CommunityConsumer(ConsumeLoop[MergeKey, ApplyBatch[MergeKey]]):
    """Every record of a poll applied in one call, none dropped as a repeat."""

    _hooks: tuple[Callable[[], None], ...] = ()
    _assignments = 0

    def on_reassigned(self, hook: Callable[[], None]) -> None:
        """`hook` runs before the first batch after the group moved partitions (Kafka): a
        workspace this member owned may have been written by another meanwhile, so state
        kept in memory must be read again."""
        self._hooks = (*self._hooks, hook)

    async def process(self, records: Sequence[BusRecord], stop: asyncio.Event) -> None:
        assignments = getattr(self.consumer, "assignments", 0)
        if assignments != self._assignments:
            self._assignments = assignments
            for hook in self._hooks:
                hook()
        where = offset_ranges(records)
        with span("communities_batch", attributes=own(records=len(records))) as batch:
            items = [item for r in records if (item := await self.decoded(r, batch)) is not None]
            if not items:
                return
            log.debug("re-optimizing communities around %d keys from %s", len(items), where)
            what = f"communities batch of {len(items)} from {where}"
            await self.with_retries(lambda: self._apply(items, ()), what, stop)
