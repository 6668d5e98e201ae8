"""Which event of a document the index applies, and what a publisher is told of its event.

Stage 1 applies an event when its version is above the stored one, or equal to it while the
stored run has not finished (an interrupted run is replayed); every other event changes
nothing. A delete leaves a record (state DELETED) at the delete's version, so an upsert
published later with an older version (a file's modification time from before the delete)
is ignored like any other older event. The publisher learns this at publish time from
`upsert_outcome` and `delete_outcome`, judged against the stored record: events of the same
document still queued ahead of the new one can change what happens in the end.
"""

from __future__ import annotations

import enum
import hashlib

from ragstream.common.events import DocumentChange
from ragstream.common.models import DocState, DocumentRecord

_FINAL = (DocState.PROCESSED, DocState.DELETED, DocState.FAILED)


class Outcome(enum.Enum):
    """What the indexer will do with a published event (ingest.proto, PublishOutcome)."""

    ACCEPTED = enum.auto()
    """Applied: the version is above the stored one, or the document is new."""
    DUPLICATE = enum.auto()
    """An upsert of the stored content at a version not above it: nothing to do."""
    STALE = enum.auto()
    """Not above the stored version (other content, or the stored run failed): ignored."""
    DELETED = enum.auto()
    """The document is deleted at a version not below the event's: ignored."""
    NOT_FOUND = enum.auto()
    """A delete of a document the index does not hold: nothing to do."""


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def is_stale(stored: DocumentRecord | None, change: DocumentChange) -> bool:
    """True when the stored state already reflects this event or a newer one."""
    if stored is None:
        return False
    if stored.version > change.version:
        return True
    return stored.version == change.version and stored.state in _FINAL


def upsert_outcome(stored: DocumentRecord | None, change: DocumentChange) -> Outcome:
    if stored is None or not is_stale(stored, change):
        return Outcome.ACCEPTED
    if stored.state is DocState.DELETED:
        return Outcome.DELETED
    if stored.state is DocState.PROCESSED and stored.content_hash == content_hash(change.content):
        return Outcome.DUPLICATE
    return Outcome.STALE


def delete_outcome(stored: DocumentRecord | None, change: DocumentChange) -> Outcome:
    if stored is None:
        return Outcome.NOT_FOUND
    if stored.state is DocState.DELETED:
        return Outcome.DELETED
    return Outcome.STALE if is_stale(stored, change) else Outcome.ACCEPTED
