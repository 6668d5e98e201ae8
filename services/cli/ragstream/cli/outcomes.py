"""What became of each document `ragstream ingest` sent, in one line each.

A document's version is its file's modification time, and the indexer ignores an event
whose version is not above the stored one (common/versions.py): a file older than the
indexed version (restored from a backup, checked out again) or than a delete would change
nothing, silently. So the server says, per document, what its event will do (the publish
result's outcome), and `ingest`:

- sends a document the index holds as deleted again, as a new version (`next_version`):
  ingesting a file after deleting its document asks for the document back;
- with --force, sends the older and the unchanged ones again too;
- names every other document it skipped, with the reason and the --force hint.

After --wait, the final statuses are checked once more (`not_indexed`): an event can still
lose to one queued ahead of it (a delete published a moment before), which the server could
not see at publish time. `--bus kafka` publishes without asking the server, so it learns
only this second part, and only with --wait.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ragstream.cli.files import FileDocument
from ragstream.common.versions import content_hash
from ragstream.v1 import common_pb2, ingest_pb2

FORCE_HINT = "`ragstream ingest --force` sends it as a new version"
RESENT = frozenset({ingest_pb2.PUBLISH_OUTCOME_DELETED})
FORCED = frozenset({ingest_pb2.PUBLISH_OUTCOME_STALE, ingest_pb2.PUBLISH_OUTCOME_DUPLICATE})
INDEXED = frozenset(
    {
        ingest_pb2.PUBLISH_OUTCOME_UNSPECIFIED,  # a server that does not say: --wait checks
        ingest_pb2.PUBLISH_OUTCOME_ACCEPTED,
        ingest_pb2.PUBLISH_OUTCOME_DUPLICATE,
    }
)
"""Outcomes after which the index holds (or will hold) the document as sent."""


def next_version(stored_version: int) -> int:
    """A version above the stored one: now, unless the stored one is later (a file's
    modification time in the future, or a server clock ahead of this one)."""
    return max(stored_version + 1, time.time_ns())


def to_resend(
    documents: Sequence[FileDocument],
    results: Iterable[ingest_pb2.PublishResult],
    force: bool,
) -> list[tuple[FileDocument, str]]:
    """The documents to publish again with a version above the stored one, each with why."""
    wanted = RESENT | FORCED if force else RESENT
    by_id = {document.doc_id: document for document in documents}
    return [
        (replace(by_id[r.doc_id], version=next_version(r.stored_version)), _resent_why(r))
        for r in results
        if r.outcome in wanted and r.doc_id in by_id
    ]


def _resent_why(result: ingest_pb2.PublishResult) -> str:
    if result.outcome == ingest_pb2.PUBLISH_OUTCOME_DELETED:
        return "the index held it as deleted, by a delete newer than the file"
    if result.outcome == ingest_pb2.PUBLISH_OUTCOME_DUPLICATE:
        return "--force, though the index holds this content already"
    return "--force, though the index holds a newer version"


def merged(
    first: Sequence[ingest_pb2.PublishResult], again: Iterable[ingest_pb2.PublishResult]
) -> list[ingest_pb2.PublishResult]:
    """`first` with each document sent again replaced by its new result."""
    latest = {result.doc_id: result for result in again}
    return [latest.get(result.doc_id, result) for result in first]


def skipped_reason(result: ingest_pb2.PublishResult) -> str | None:
    """Why the index will not take the document up, or None when it will (or holds it)."""
    if result.outcome == ingest_pb2.PUBLISH_OUTCOME_STALE:
        if result.stored_version == result.version:
            return (
                "the index took this version up before and did not index it (see "
                f"`ragstream status`); {FORCE_HINT}"
            )
        return _older("the index holds a newer version", result.stored_version, result.version)
    if result.outcome == ingest_pb2.PUBLISH_OUTCOME_DELETED:
        return _older("deleted by a newer delete", result.stored_version, result.version)
    return None


def unchanged(result: ingest_pb2.PublishResult) -> bool:
    return result.outcome == ingest_pb2.PUBLISH_OUTCOME_DUPLICATE


def not_indexed(
    document: FileDocument, version: int, status: common_pb2.DocumentStatus
) -> str | None:
    """Why `document`, published at `version`, is not what the index holds in its final
    `status`; None when it is (failures are told apart by the caller, from the state)."""
    if status.state == common_pb2.DOCUMENT_STATE_DELETED:
        return _older("deleted by a newer delete", status.version, version)
    if status.version == version or status.content_hash == content_hash(document.content):
        return None
    return _older("the index holds a newer version", status.version, version)


def _older(what: str, stored: int, version: int) -> str:
    return f"not indexed: {what} (version {stored}; this file's is {version}); {FORCE_HINT}"


def not_deleted(result: ingest_pb2.PublishResult, workspace: str) -> str | None:
    """Why a delete changes nothing, or None when it deletes the document."""
    if result.outcome == ingest_pb2.PUBLISH_OUTCOME_NOT_FOUND:
        return f"unknown document: workspace '{workspace}' holds no document of this id"
    if result.outcome == ingest_pb2.PUBLISH_OUTCOME_DELETED:
        return "already deleted"
    if result.outcome == ingest_pb2.PUBLISH_OUTCOME_STALE:
        return f"the index holds a version newer than the delete ({result.stored_version})"
    return None
