"""Document-change events: encoding for producers, decoding and validation for the indexer.

A record's value is a `ragstream.v1.DocumentEvent`, as protobuf (`content-type:
application/protobuf`, the default) or JSON (`application/json`, protobuf's JSON mapping).
A null value (tombstone) deletes the document named by the key `workspace/doc_id`.
Anything that cannot be decoded or fails validation raises PoisonEvent: the consumer sends
it to the dead-letter topic and moves on.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from ragstream.common.bus.protocols import BusRecord, OutgoingRecord
from ragstream.common.telemetry import Headers, trace_headers
from ragstream.v1 import events_pb2

CONTENT_TYPE_PROTOBUF = b"application/protobuf"
CONTENT_TYPE_JSON = b"application/json"
CE_TYPE_UPSERTED = b"ragstream.document.upserted"
CE_TYPE_DELETED = b"ragstream.document.deleted"
_WORKSPACE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MAX_DOC_ID_CHARS = 512
_VISIBLE = frozenset("LNPS")
"""Unicode major categories that draw something: letters, numbers, punctuation, symbols."""


def has_control_characters(text: str) -> bool:
    return any(unicodedata.category(char) == "Cc" for char in text)


def has_format_characters(text: str) -> bool:
    """Unicode category Cf: bidi controls (U+202A-U+202E, U+2066-U+2069), zero-width
    spaces and joiners, soft hyphens. They are invisible, and bidi controls can make an
    id display as another one."""
    return any(unicodedata.category(char) == "Cf" for char in text)


def has_visible_character(text: str) -> bool:
    return any(unicodedata.category(char)[0] in _VISIBLE for char in text)


def doc_id_problems(doc_id: str) -> Iterator[str]:
    """Every rule `doc_id` breaks, each as "must ..."; the same rules as the gRPC API's."""
    if not 1 <= len(doc_id) <= MAX_DOC_ID_CHARS:
        yield f"must have 1 to {MAX_DOC_ID_CHARS} characters"
        return
    if has_control_characters(doc_id):
        yield "must not contain control characters"
    if has_format_characters(doc_id):
        yield "must not contain format characters (bidi controls, zero-width characters)"
    if not has_visible_character(doc_id):
        yield "must contain a visible character"


class PoisonEvent(ValueError):
    """An event that no retry can fix: undecodable, invalid or too large."""


@dataclass(frozen=True, slots=True)
class DocumentChange:
    """A validated DocumentEvent, as the indexing stages see it."""

    workspace: str
    doc_id: str
    version: int
    deleted: bool
    content: str = ""
    file_path: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    timestamp: float | None = None
    event_id: str = ""
    graph: bool = False
    """The content is curated graph records (`graph_records`), not text."""

    @property
    def key(self) -> str:
        return f"{self.workspace}/{self.doc_id}"


def encode(change: DocumentChange) -> OutgoingRecord:
    """The bus record for a change (protobuf value, CloudEvents binary-mode headers), with
    the current trace context (W3C traceparent) when encoded inside a span."""
    event = events_pb2.DocumentEvent(
        workspace=change.workspace,
        doc_id=change.doc_id,
        version=change.version,
        event_id=change.event_id or uuid.uuid4().hex,
    )
    if change.deleted:
        event.delete.SetInParent()
    else:
        event.upsert.content = change.content
        event.upsert.file_path = change.file_path
        event.upsert.metadata.update(change.metadata)
        if change.graph:
            event.upsert.format = events_pb2.DOCUMENT_FORMAT_GRAPH_RECORDS
        if change.timestamp is not None:
            event.upsert.timestamp.FromNanoseconds(int(change.timestamp * 1e9))
    headers = (
        ("content-type", CONTENT_TYPE_PROTOBUF),
        ("ce_specversion", b"1.0"),
        ("ce_id", event.event_id.encode()),
        ("ce_source", b"ragstream"),
        ("ce_type", CE_TYPE_DELETED if change.deleted else CE_TYPE_UPSERTED),
        *trace_headers(),
    )
    return OutgoingRecord(key=change.key, value=event.SerializeToString(), headers=headers)


def decode(record: BusRecord, max_bytes: int) -> DocumentChange:
    """Validates a bus record into a DocumentChange, or raises PoisonEvent saying why."""
    if record.value is None:
        return _tombstone(record)
    if len(record.value) > max_bytes:
        raise PoisonEvent(f"event of {len(record.value)} bytes exceeds the limit of {max_bytes}")
    event = _parse(record.value, record.header("content-type") or CONTENT_TYPE_PROTOBUF)
    change = _validate(event)
    if record.key and record.key != change.key:
        # The key decides the partition, so a wrong one would break per-document order.
        raise PoisonEvent(f"record key {record.key!r} does not match the event's {change.key!r}")
    return change


def _tombstone(record: BusRecord) -> DocumentChange:
    workspace, sep, doc_id = record.key.partition("/")
    if not sep:
        raise PoisonEvent(f"tombstone key {record.key!r} is not 'workspace/doc_id'")
    return _validate(
        events_pb2.DocumentEvent(
            workspace=workspace,
            doc_id=doc_id,
            version=int(record.timestamp * 1e9) or 1,
            delete=events_pb2.DocumentDelete(),
        )
    )


def _parse(value: bytes, content_type: bytes) -> events_pb2.DocumentEvent:
    event = events_pb2.DocumentEvent()
    kind = content_type.split(b";")[0].strip().lower()
    if kind == CONTENT_TYPE_JSON:
        try:
            json_format.Parse(value.decode("utf-8"), event)
        except (UnicodeDecodeError, json_format.ParseError) as exc:
            raise PoisonEvent(f"invalid JSON event: {exc}") from None
    elif kind == CONTENT_TYPE_PROTOBUF:
        try:
            event.ParseFromString(value)
        except DecodeError as exc:
            raise PoisonEvent(f"undecodable protobuf event: {exc}") from None
    else:
        raise PoisonEvent(f"unsupported content-type {content_type.decode(errors='replace')!r}")
    return event


def _validate(event: events_pb2.DocumentEvent) -> DocumentChange:
    if not _WORKSPACE.match(event.workspace):
        raise PoisonEvent(f"invalid workspace {event.workspace!r}")
    for problem in doc_id_problems(event.doc_id):
        raise PoisonEvent(f"doc_id {problem}")
    if event.version <= 0:
        raise PoisonEvent("version must be a positive integer")
    change = event.WhichOneof("change")
    if change is None:
        raise PoisonEvent("event has neither upsert nor delete")
    if change == "delete":
        return DocumentChange(
            event.workspace, event.doc_id, event.version, deleted=True, event_id=event.event_id
        )
    upsert = event.upsert
    timestamp = upsert.timestamp.ToNanoseconds() / 1e9 if upsert.HasField("timestamp") else None
    return DocumentChange(
        event.workspace,
        event.doc_id,
        event.version,
        deleted=False,
        content=upsert.content,
        file_path=upsert.file_path,
        metadata=dict(upsert.metadata),
        timestamp=timestamp,
        event_id=event.event_id,
        graph=upsert.format == events_pb2.DOCUMENT_FORMAT_GRAPH_RECORDS,
    )


@dataclass(frozen=True, slots=True)
class MergeKey:
    """A graph-merge event: this entity or relation key must be re-derived."""

    workspace: str
    key: str


def encode_merge(item: MergeKey, traced: Headers | None = None) -> OutgoingRecord:
    """`traced`: the trace headers, when the caller encodes many events in one span and has
    taken them once (`trace_headers()`); else the current span's."""
    event = events_pb2.GraphMergeEvent(workspace=item.workspace, key=item.key)
    traced = trace_headers() if traced is None else traced
    return OutgoingRecord(
        key=f"{item.workspace}/{item.key}",
        value=event.SerializeToString(),
        headers=(("content-type", CONTENT_TYPE_PROTOBUF), *traced),
    )


def encode_community(item: MergeKey, traced: Headers) -> OutgoingRecord:
    """A merged key for the community step: keyed by its workspace alone (`workspace/`), so
    that every event of one workspace goes to one partition, whose one consumer is then the
    single writer of the workspace's communities. Decoded by `decode_merge`."""
    event = events_pb2.GraphMergeEvent(workspace=item.workspace, key=item.key)
    return OutgoingRecord(
        key=f"{item.workspace}/",
        value=event.SerializeToString(),
        headers=(("content-type", CONTENT_TYPE_PROTOBUF), *traced),
    )


def decode_merge(record: BusRecord) -> MergeKey:
    if record.value is None:
        raise PoisonEvent("graph-merge event without a value")
    event = events_pb2.GraphMergeEvent()
    try:
        event.ParseFromString(record.value)
    except DecodeError as exc:
        raise PoisonEvent(f"undecodable graph-merge event: {exc}") from None
    if not _WORKSPACE.match(event.workspace) or not event.key:
        raise PoisonEvent("graph-merge event needs a valid workspace and a key")
    return MergeKey(event.workspace, event.key)
