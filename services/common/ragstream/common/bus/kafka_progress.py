"""How far a Kafka consumer group is behind: end offsets minus committed offsets."""

from __future__ import annotations

from collections.abc import Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient


async def group_lag(bootstrap: str, group_id: str, topics: Sequence[str]) -> int:
    """Records in `topics` that `group_id` has not committed yet (all partitions)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    # Subscribed (without a group) so that it fetches the topics' partition metadata.
    reader = AIOKafkaConsumer(*topics, bootstrap_servers=bootstrap, enable_auto_commit=False)
    await admin.start()
    await reader.start()
    try:
        partitions = [
            TopicPartition(topic, p)
            for topic in topics
            for p in sorted(reader.partitions_for_topic(topic) or ())
        ]
        if not partitions:
            return 0
        ends = await reader.end_offsets(partitions)
        committed = await admin.list_consumer_group_offsets(group_id, partitions=partitions)
        done = {tp: meta.offset for tp, meta in committed.items() if meta.offset >= 0}
        return sum(max(0, ends[tp] - done.get(tp, 0)) for tp in partitions)
    finally:
        await reader.stop()
        await admin.close()
