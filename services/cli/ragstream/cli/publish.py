"""`ragstream ingest --bus kafka`: files published straight to the Kafka document topic.

For deployments whose indexers consume Kafka: the events are the same as the gRPC
IngestService publishes (protobuf DocumentEvent, CloudEvents headers), keyed
`workspace/doc_id`. A document's version is its file's mtime in nanoseconds (with --force:
a version above now) and its timestamp the mtime, so re-publishing an unchanged file is
skipped by the indexer. Nothing is asked of the server before publishing, so what the indexer
did with each document (indexed, or ignored as older than the stored version or a delete) is
known only with --wait, from the final statuses (outcomes.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import grpc
from rich.console import Console

from ragstream.cli.client import Client
from ragstream.cli.files import FileDocument, read_all
from ragstream.cli.outcomes import next_version
from ragstream.cli.report import err, print_indexed, print_skipped, waiting
from ragstream.common.bus.kafka import KafkaBus
from ragstream.common.bus.kafka_admin import KafkaUnavailableError
from ragstream.common.bus.topics import Topics
from ragstream.common.config import WORKSPACE_PATTERN, Settings
from ragstream.common.events import DocumentChange, encode
from ragstream.v1 import ingest_pb2

out = Console()
PUBLISH_BATCH = 256


def file_change(workspace: str, document: FileDocument, force: bool) -> DocumentChange:
    """The upsert of `document`; with `force` at a version above now, its timestamp still
    the file's mtime."""
    return DocumentChange(
        workspace=workspace,
        doc_id=document.doc_id,
        version=next_version(document.version) if force else document.version,
        deleted=False,
        content=document.content,
        file_path=str(document.path),
        metadata=dict(document.metadata),
        timestamp=document.version / 1e9,
    )


async def publish_files(
    settings: Settings, workspace: str, documents: list[FileDocument], force: bool
) -> tuple[str, list[ingest_pb2.PublishResult]]:
    """Publishes the documents; returns the topic they went to and the versions sent."""
    topic = Topics(settings.bus.topic_prefix).documents
    changes = [file_change(workspace, document, force) for document in documents]
    bus = await KafkaBus.open(settings.bus, settings.indexer.max_document_bytes)
    try:
        for start in range(0, len(changes), PUBLISH_BATCH):
            batch = changes[start : start + PUBLISH_BATCH]
            await bus.publisher.publish(topic, [encode(change) for change in batch])
    finally:
        await bus.close()
    return topic, [ingest_pb2.PublishResult(doc_id=c.doc_id, version=c.version) for c in changes]


@dataclass(frozen=True, slots=True)
class KafkaIngest:
    """What `ragstream ingest --bus kafka` was asked to do."""

    workspace: str
    paths: list[Path]
    wait: bool
    timeout_s: float
    server: str
    """With `wait`, the query service that reports the status."""
    graph: bool = True
    """With `wait`: wait for the documents' knowledge-graph merges too."""
    force: bool = False
    """Send each document at a version above now (`next_version`), not its file's."""


async def ingest_to_kafka(settings: Settings, job: KafkaIngest) -> int:
    """Exit code 0 when all went well, 1 when some files were skipped, failed or not indexed
    (known only with `wait`: the bus cannot tell), 2 on errors."""
    if not re.match(WORKSPACE_PATTERN, job.workspace):
        err.print(f"[red]error[/red]: invalid workspace {job.workspace!r}")
        return 2
    documents, errors = read_all(job.paths)
    print_skipped(errors)
    limit = settings.indexer.max_document_bytes
    fitting: list[FileDocument] = []
    for document in documents:
        if len(document.content.encode()) <= limit:
            fitting.append(document)
        else:
            err.print(f"[red]skipped[/red] {document.path}: larger than {limit} bytes")
    skipped = 1 if errors or len(fitting) < len(documents) else 0
    if not fitting:
        return skipped
    try:
        topic, published = await publish_files(settings, job.workspace, fitting, job.force)
    except KafkaUnavailableError as exc:
        err.print(f"[red]error[/red]: {exc}")
        return 2
    out.print(f"published {len(fitting)} documents to {topic} (workspace '{job.workspace}')")
    if not job.wait:
        return skipped
    return max(skipped, await _wait(job, fitting, published))


async def _wait(
    job: KafkaIngest, documents: list[FileDocument], published: list[ingest_pb2.PublishResult]
) -> int:
    """0 when every document was indexed as sent, 1 when some were not or failed, 2 when the
    server cannot tell."""
    try:
        async with Client(job.server) as client:
            with waiting() as report:
                statuses = await client.wait_until_indexed(
                    job.workspace, published, job.timeout_s, job.graph, report
                )
    except (grpc.aio.AioRpcError, TimeoutError) as exc:
        err.print(f"[red]error[/red] waiting for {job.server}: {exc}")
        return 2
    return print_indexed(documents, published, statuses)
