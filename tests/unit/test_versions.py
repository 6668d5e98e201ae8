"""What a publisher is told its event will do (common/versions.py), against the stored
record, and what `ragstream ingest` makes of it (cli/outcomes.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ragstream.cli.files import FileDocument
from ragstream.cli.outcomes import merged, next_version, not_indexed, to_resend
from ragstream.common.events import DocumentChange
from ragstream.common.models import DocState, DocumentRecord
from ragstream.common.versions import (
    Outcome,
    content_hash,
    delete_outcome,
    is_stale,
    upsert_outcome,
)
from ragstream.v1 import common_pb2, ingest_pb2

TEXT = "The Petrel 2 inspects fish farms."


def stored(version: int, state: DocState, text: str = TEXT) -> DocumentRecord:
    return DocumentRecord("w", "doc", version, state, content_hash=content_hash(text))


def upsert(version: int, text: str = TEXT) -> DocumentChange:
    return DocumentChange("w", "doc", version, False, content=text)


@pytest.mark.parametrize(
    ("record", "change", "outcome"),
    [
        (None, upsert(5), Outcome.ACCEPTED),
        (stored(5, DocState.PROCESSED), upsert(6, "other"), Outcome.ACCEPTED),
        (stored(5, DocState.PROCESSING), upsert(5), Outcome.ACCEPTED),  # an interrupted run
        (stored(5, DocState.PROCESSED), upsert(5), Outcome.DUPLICATE),
        (stored(5, DocState.PROCESSED), upsert(4), Outcome.DUPLICATE),
        (stored(5, DocState.PROCESSED), upsert(4, "older text"), Outcome.STALE),
        (stored(5, DocState.FAILED), upsert(5), Outcome.STALE),
        (stored(5, DocState.PROCESSING), upsert(4), Outcome.STALE),
        (stored(9, DocState.DELETED), upsert(5), Outcome.DELETED),
        (stored(9, DocState.DELETED), upsert(9), Outcome.DELETED),
        (stored(9, DocState.DELETED), upsert(10), Outcome.ACCEPTED),
    ],
)
def test_an_upsert_outcome_is_what_the_indexer_does_with_it(
    record: DocumentRecord | None, change: DocumentChange, outcome: Outcome
) -> None:
    assert upsert_outcome(record, change) is outcome
    # Accepted exactly when stage 1 applies the event.
    assert (outcome is Outcome.ACCEPTED) is not is_stale(record, change)


def test_a_delete_outcome_names_unknown_and_deleted_documents() -> None:
    delete = DocumentChange("w", "doc", 10, True)
    assert delete_outcome(None, delete) is Outcome.NOT_FOUND
    assert delete_outcome(stored(5, DocState.DELETED), delete) is Outcome.DELETED
    assert delete_outcome(stored(5, DocState.PROCESSED), delete) is Outcome.ACCEPTED
    assert delete_outcome(stored(11, DocState.PROCESSED), delete) is Outcome.STALE


def document(doc_id: str, version: int, text: str = TEXT) -> FileDocument:
    return FileDocument(doc_id, Path(doc_id), text, version)


def result(
    doc_id: str,
    outcome: ingest_pb2.PublishOutcome,
    version: int = 5,
    stored_version: int = 0,
) -> ingest_pb2.PublishResult:
    return ingest_pb2.PublishResult(
        doc_id=doc_id,
        version=version,
        outcome=outcome,
        stored_version=stored_version,
    )


def test_deleted_ones_are_resent_always_and_older_and_unchanged_ones_with_force() -> None:
    future = time.time_ns() + 10**12  # a stored version ahead of this clock
    documents = [document(name, 5) for name in ("gone", "old", "same", "new")]
    results = [
        result("gone", ingest_pb2.PUBLISH_OUTCOME_DELETED, stored_version=future),
        result("old", ingest_pb2.PUBLISH_OUTCOME_STALE, stored_version=7),
        result("same", ingest_pb2.PUBLISH_OUTCOME_DUPLICATE, stored_version=5),
        result("new", ingest_pb2.PUBLISH_OUTCOME_ACCEPTED),
    ]
    plain = to_resend(documents, results, force=False)
    assert [(d.doc_id, d.version) for d, _ in plain] == [("gone", future + 1)]
    forced = to_resend(documents, results, force=True)
    assert [d.doc_id for d, _ in forced] == ["gone", "old", "same"]
    assert all(d.version > time.time_ns() - 10**9 * 60 for d, _ in forced)
    again = [result("gone", ingest_pb2.PUBLISH_OUTCOME_ACCEPTED, version=future + 1)]
    assert [r.outcome for r in merged(results, again)] == [
        ingest_pb2.PUBLISH_OUTCOME_ACCEPTED,
        *(r.outcome for r in results[1:]),
    ]
    assert next_version(3) > 3 and next_version(future) == future + 1


def status(
    version: int, state: common_pb2.DocumentState, text: str = TEXT
) -> common_pb2.DocumentStatus:
    return common_pb2.DocumentStatus(
        doc_id="doc",
        version=version,
        state=state,
        content_hash=content_hash(text),
    )


def test_after_the_wait_a_document_a_later_event_won_over_is_named() -> None:
    sent = document("doc", 5)
    processed, deleted = common_pb2.DOCUMENT_STATE_PROCESSED, common_pb2.DOCUMENT_STATE_DELETED
    assert not_indexed(sent, 5, status(5, processed)) is None
    assert not_indexed(sent, 5, status(8, processed)) is None  # newer, the same content
    newer = not_indexed(sent, 5, status(8, processed, "other text"))
    assert newer is not None and "the index holds a newer version (version 8" in newer
    gone = not_indexed(sent, 5, status(8, deleted))
    assert gone is not None and "deleted by a newer delete" in gone and "--force" in gone
