"""Kafka administration for the bus: creating the topics that are missing.

Topics are created once, with the configured partition count, when a process opens the
bus; existing topics are left exactly as they are (an operator may have tuned them).
Several processes may start at once, so "already exists" counts as success.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import errors
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from ragstream.common.bus.kafka_security import KafkaOptions, connection_problem
from ragstream.common.errors import BackendUnavailableError

MAX_REPLICATION = 3
"""Replicas per partition of a created topic, fewer when the cluster has fewer brokers."""


class KafkaUnavailableError(BackendUnavailableError):
    """The cluster could not be reached or refused to create a topic; the message says why."""


@dataclass(frozen=True, slots=True)
class TopicSpec:
    name: str
    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)
    """Topic-level settings applied at creation (e.g. max.message.bytes)."""


def replication_factor(brokers: int) -> int:
    return max(1, min(MAX_REPLICATION, brokers))


def creation_errors(topic_errors: Sequence[Sequence[Any]]) -> list[str]:
    """Why topics could not be created, from a CreateTopics response's (topic, error code,
    [message]) entries; losing a creation race to another process is no error."""
    problems = []
    for topic, code, *detail in topic_errors:
        if code in (0, errors.TopicAlreadyExistsError.errno):
            continue
        message = detail[0] if detail and detail[0] else errors.for_code(code).message
        problems.append(f"{topic}: {message}")
    return problems


async def ensure_topics(
    options: KafkaOptions, topics: Sequence[TopicSpec], *, client_id: str = "ragstream"
) -> list[str]:
    """Creates the topics that do not exist yet; returns the names it created."""
    admin = AIOKafkaAdminClient(**options.client(client_id=client_id))
    try:
        await admin.start()
        existing = set(await admin.list_topics())
        missing = [topic for topic in topics if topic.name not in existing]
        if not missing:
            return []
        cluster = await admin.describe_cluster()
        replicas = replication_factor(len(cluster["brokers"]))
        response = await admin.create_topics(
            [
                NewTopic(t.name, t.partitions, replicas, topic_configs=dict(t.configs))
                for t in missing
            ]
        )
    except errors.KafkaError as exc:
        reason = await explain(exc, options)
        raise KafkaUnavailableError(
            f"cannot prepare the bus topics on Kafka at {options.bootstrap}: {reason}"
        ) from None
    finally:
        await admin.close()
    problems = creation_errors(response.topic_errors)
    if problems:
        raise KafkaUnavailableError("Kafka refused to create topics: " + "; ".join(problems))
    return [topic.name for topic in missing]


async def explain(exc: errors.KafkaError, options: KafkaOptions) -> str:
    """Why a client failed; for a failed connection, the reason the broker gives."""
    if isinstance(exc, errors.KafkaConnectionError):
        return await connection_problem(options) or str(exc)
    return str(exc)


async def start_or_explain(client: Any, options: KafkaOptions, what: str) -> None:
    """Starts an aiokafka client (`what`, for the message); if it cannot, stops it and raises
    KafkaUnavailableError with the reason, e.g. refused credentials and their setting."""
    try:
        await client.start()
    except errors.KafkaError as exc:
        await client.stop()
        reason = await explain(exc, options)
        raise KafkaUnavailableError(
            f"{what} cannot connect to Kafka at {options.bootstrap}: {reason}"
        ) from None
