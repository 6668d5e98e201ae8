"""How far a Kafka consumer group is behind: end offsets minus committed offsets, in all
records or in one workspace's.

Kafka counts offsets, not keys, so one workspace's backlog is found by reading the records
between the group's committed offset and the end of each partition that is behind, and
counting those whose key starts with `workspace/` (document and graph-merge keys both do).
A group that is not behind costs no read at all. The read is bounded: at most SCAN_RECORDS
records and SCAN_SECONDS per call; records left unread then count as the workspace's, so the
answer is an upper bound and a zero is always exact (`ingest --wait` never stops early).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from ragstream.common.bus.kafka_security import KafkaOptions
from ragstream.common.bus.kafka_stop import stop_consumer

COORDINATOR_ATTEMPTS = 5
COORDINATOR_BACKOFF_S = 0.5
SCAN_RECORDS = 50_000
SCAN_SECONDS = 5.0
Span = tuple[int, int]
"""[committed, end) offsets of one partition."""


async def group_lag(
    options: KafkaOptions, group_id: str, topics: Sequence[str], workspace: str | None = None
) -> int:
    """Records in `topics` that `group_id` has not committed yet (all partitions), only
    those keyed `workspace/...` when a workspace is given."""
    admin = AIOKafkaAdminClient(**options.client())
    # Subscribed (without a group) so that it fetches the topics' partition metadata and
    # owns every partition, at whatever offset the scan seeks to.
    reader = AIOKafkaConsumer(*topics, **options.client(enable_auto_commit=False))
    try:  # both are closed also when one cannot start (an unreachable or refusing cluster)
        await admin.start()
        await reader.start()
        partitions = [
            TopicPartition(topic, p)
            for topic in topics
            for p in sorted(reader.partitions_for_topic(topic) or ())
        ]
        if not partitions:
            return 0
        ends = await reader.end_offsets(partitions)
        done = await committed_offsets(admin, group_id, partitions)
        spans = {tp: (done.get(tp, 0), ends[tp]) for tp in partitions}
        behind = {tp: span for tp, span in spans.items() if span[1] > span[0]}
        if workspace is None or not behind:
            return sum(end - start for start, end in behind.values())
        return await count_keyed(reader, behind, f"{workspace}/".encode())
    finally:
        await stop_consumer(reader)
        await admin.close()


async def committed_offsets(
    admin: AIOKafkaAdminClient, group_id: str, partitions: Sequence[TopicPartition]
) -> dict[TopicPartition, int]:
    """The group's committed offsets; retried a few times while the broker answers with a
    retriable error (a new cluster creates its group coordinator on the first request)."""
    attempt = 1
    while True:
        try:
            committed = await admin.list_consumer_group_offsets(group_id, partitions=partitions)
            break
        except KafkaError as exc:
            if not exc.retriable or attempt == COORDINATOR_ATTEMPTS:
                raise
        await asyncio.sleep(COORDINATOR_BACKOFF_S * attempt)
        attempt += 1
    return {tp: meta.offset for tp, meta in committed.items() if meta.offset >= 0}


async def count_keyed(
    reader: AIOKafkaConsumer,
    spans: Mapping[TopicPartition, Span],
    prefix: bytes,
    *,
    max_records: int = SCAN_RECORDS,
    max_seconds: float = SCAN_SECONDS,
) -> int:
    """Records in `spans` whose key starts with `prefix`, plus every record left unread when
    the limits stop the scan."""
    position = {tp: start for tp, (start, _) in spans.items()}
    for tp, start in position.items():
        reader.seek(tp, start)
    open_spans = {tp for tp, (start, end) in spans.items() if start < end}
    reader.pause(*(set(reader.assignment()) - open_spans))
    found = scanned = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_seconds
    while open_spans and scanned < max_records and loop.time() < deadline:
        batches = await reader.getmany(*open_spans, timeout_ms=200, max_records=1000)
        for tp, records in batches.items():
            end = spans[tp][1]
            within = [record for record in records if record.offset < end]
            scanned += len(within)
            found += sum(1 for r in within if r.key is not None and r.key.startswith(prefix))
            # The fetch position, not the last offset + 1: it also steps over offsets that
            # hold no record (transaction markers).
            position[tp] = await reader.position(tp)
            if position[tp] >= end:
                open_spans.discard(tp)
                reader.pause(tp)
    unread = sum(max(0, spans[tp][1] - position[tp]) for tp in open_spans)
    return found + unread
