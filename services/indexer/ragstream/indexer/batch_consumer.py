"""Stage 2's consumer: one poll of graph-merge events is one batch, applied in one call.

Merging is state-based (a key is re-derived from the ledger), so a key that appears several
times in a poll is merged once, for its last record. The batch is applied by one call of
`apply` with every key of the poll, so the stores see one set of reads and writes per poll
instead of one per key, and the poll is committed right after: a crash redoes at most the
batch in flight. Each record still gets its own `process` span, a child of the stage-1 span
that published it; the apply call receives those contexts so per-key work is traced there.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span

from ragstream.common.bus.protocols import BusRecord
from ragstream.common.bus.spans import start_consumer_span
from ragstream.common.telemetry import context_of, links_of, mark_failed, own, span
from ragstream.indexer.consumer import ConsumeLoop, group_by_key

log = logging.getLogger(__name__)
T = TypeVar("T")
ApplyBatch = Callable[[Sequence[T], Sequence[otel_context.Context]], Awaitable[object]]
"""(items of one poll, the trace context of each item) -> applied."""


def offset_ranges(records: Sequence[BusRecord]) -> str:
    """Where a poll's records sit, per partition: `topic[partition]@first..last`."""
    ranges: dict[tuple[str, int], tuple[int, int]] = {}
    for record in records:
        place = record.topic, record.partition
        low, high = ranges.get(place, (record.offset, record.offset))
        ranges[place] = min(low, record.offset), max(high, record.offset)
    return ", ".join(f"{t}[{p}]@{low}..{high}" for (t, p), (low, high) in ranges.items())


class BatchConsumer(ConsumeLoop[T, ApplyBatch[T]]):
    """Stage 2: every key of a poll applied in one call."""

    async def process(self, records: Sequence[BusRecord], stop: asyncio.Event) -> None:
        groups = group_by_key(records)
        # The records of one poll come from few producer spans (one per published document):
        # each distinct trace context is parsed once.
        parse = functools.cache(context_of)
        opened: list[Span] = []
        try:
            items: list[T] = []
            contexts: list[otel_context.Context] = []
            for group in groups:
                # The last record serves the earlier ones of its key: its span links them.
                record = group[-1]
                links = links_of(group[:-1], parse)
                key_span = start_consumer_span(record, links, parse(record.headers))
                opened.append(key_span)
                item = await self.decoded(record, key_span)
                if item is not None:
                    items.append(item)
                    contexts.append(trace.set_span_in_context(key_span))
            if not items:
                return
            where = offset_ranges(records)
            log.info("merging %d keys from %s", len(items), where)
            with span("merge_batch", attributes=own(keys=len(items), records=len(records))):
                what = f"batch of {len(items)} from {where}"
                await self.with_retries(lambda: self._apply(items, contexts), what, stop)
        except BaseException as exc:  # the poll is not committed: its keys are merged again
            for key_span in opened:
                mark_failed(key_span, exc)
            raise
        finally:
            for key_span in opened:
                key_span.end()
