"""`ragstream ingest --bus kafka`: files published straight to the Kafka document topic.

For deployments whose indexers consume Kafka: the events are the same as the gRPC
IngestService publishes (protobuf DocumentEvent, CloudEvents headers), keyed
`workspace/doc_id`. A document's version is its file's mtime in nanoseconds and its
timestamp the mtime, so re-publishing an unchanged file is skipped by the indexer.
"""

from __future__ import annotations

import re
from pathlib import Path

import grpc
from rich.console import Console

from ragstream.cli.client import Client
from ragstream.cli.files import FileDocument, read_all
from ragstream.cli.report import err, print_skipped, waiting
from ragstream.common.bus.kafka import KafkaBus
from ragstream.common.bus.kafka_admin import KafkaUnavailableError
from ragstream.common.bus.topics import Topics
from ragstream.common.config import WORKSPACE_PATTERN, Settings
from ragstream.common.events import DocumentChange, encode
from ragstream.v1 import common_pb2, ingest_pb2

out = Console()
PUBLISH_BATCH = 256


def file_change(workspace: str, document: FileDocument) -> DocumentChange:
    return DocumentChange(
        workspace=workspace,
        doc_id=document.doc_id,
        version=document.version,
        deleted=False,
        content=document.content,
        file_path=str(document.path),
        metadata=dict(document.metadata),
        timestamp=document.version / 1e9,
    )


async def publish_files(settings: Settings, workspace: str, documents: list[FileDocument]) -> str:
    """Publishes the documents; returns the topic they went to."""
    topic = Topics(settings.bus.topic_prefix).documents
    bus = await KafkaBus.open(settings.bus, settings.indexer.max_document_bytes)
    try:
        for start in range(0, len(documents), PUBLISH_BATCH):
            batch = documents[start : start + PUBLISH_BATCH]
            await bus.publisher.publish(topic, [encode(file_change(workspace, d)) for d in batch])
    finally:
        await bus.close()
    return topic


async def ingest_to_kafka(
    settings: Settings,
    workspace: str,
    paths: list[Path],
    wait: bool,
    timeout_s: float,
    server: str,
    graph: bool = True,
) -> int:
    """Exit code 0 when all went well, 1 when some files were skipped or failed, 2 on errors.
    With `wait`, the status comes from the query service at `server` (and, when `graph`,
    the wait lasts until the documents' knowledge-graph merges are applied too)."""
    if not re.match(WORKSPACE_PATTERN, workspace):
        err.print(f"[red]error[/red]: invalid workspace {workspace!r}")
        return 2
    documents, errors = read_all(paths)
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
        topic = await publish_files(settings, workspace, fitting)
    except KafkaUnavailableError as exc:
        err.print(f"[red]error[/red]: {exc}")
        return 2
    out.print(f"published {len(fitting)} documents to {topic} (workspace '{workspace}')")
    if not wait:
        return skipped
    return max(skipped, await _wait(server, workspace, fitting, timeout_s, graph))


async def _wait(
    server: str, workspace: str, documents: list[FileDocument], timeout: float, graph: bool
) -> int:
    """0 when every document was indexed, 1 when some failed, 2 when the server cannot tell."""
    published = [ingest_pb2.PublishResult(doc_id=d.doc_id, version=d.version) for d in documents]
    try:
        async with Client(server) as client:
            with waiting() as report:
                statuses = await client.wait_until_indexed(
                    workspace, published, timeout, graph, report
                )
    except (grpc.aio.AioRpcError, TimeoutError) as exc:
        err.print(f"[red]error[/red] waiting for {server}: {exc}")
        return 2
    failed = [s for s in statuses if s.state == common_pb2.DOCUMENT_STATE_FAILED]
    for status in failed:
        err.print(f"[red]failed[/red] {status.doc_id}: {status.error}")
    out.print(f"indexed {len(statuses) - len(failed)}, failed {len(failed)}")
    return 1 if failed else 0
