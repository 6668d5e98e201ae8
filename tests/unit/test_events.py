import json

import pytest

from ragstream.common.bus.protocols import BusRecord
from ragstream.common.events import DocumentChange, PoisonEvent, decode, encode


def as_record(
    value: bytes | None, key: str = "ws/doc-1", content_type: bytes | None = None
) -> BusRecord:
    headers = (("content-type", content_type),) if content_type else ()
    return BusRecord("t", 0, 7, key, value, headers, timestamp=1_700_000_000.0)


def test_protobuf_round_trip_keeps_every_field() -> None:
    change = DocumentChange(
        "ws", "doc-1", 3, False, "héllo 世界", "a/b.md", {"lang": "zh"}, 1_700_000_000.5, "e1"
    )
    record = encode(change)
    assert record.key == "ws/doc-1"
    headers = dict(record.headers)
    assert headers["ce_type"] == b"ragstream.document.upserted"
    assert headers["content-type"] == b"application/protobuf"
    decoded = decode(as_record(record.value, content_type=headers["content-type"]), 10_000)
    assert decoded == change


def test_json_events_are_accepted() -> None:
    value = json.dumps(
        {"workspace": "ws", "docId": "d", "version": "5", "upsert": {"content": "text"}}
    ).encode()
    change = decode(as_record(value, key="ws/d", content_type=b"application/json"), 10_000)
    assert (change.doc_id, change.version, change.content, change.deleted) == (
        "d",
        5,
        "text",
        False,
    )


def test_tombstone_deletes_the_keyed_document() -> None:
    change = decode(as_record(None, key="ws/some/doc"), 10_000)
    assert change.deleted and change.workspace == "ws" and change.doc_id == "some/doc"


@pytest.mark.parametrize(
    ("value", "content_type", "reason"),
    [
        (b"\xff\xfe garbage", b"application/protobuf", "undecodable"),
        (b"{not json", b"application/json", "invalid JSON"),
        (b"\xff\xfe", b"application/json", "invalid JSON"),
        (
            json.dumps({"workspace": "ws", "docId": "d", "version": 1}).encode(),
            b"application/json",
            "neither upsert nor delete",
        ),
        (
            json.dumps(
                {"workspace": "bad space", "docId": "d", "version": 1, "delete": {}}
            ).encode(),
            b"application/json",
            "invalid workspace",
        ),
        (
            json.dumps({"workspace": "ws", "docId": "", "version": 1, "delete": {}}).encode(),
            b"application/json",
            "doc_id",
        ),
        (
            json.dumps({"workspace": "ws", "docId": "d", "delete": {}}).encode(),
            b"application/json",
            "version",
        ),
        (b"x", b"text/plain", "unsupported content-type"),
    ],
)
def test_poison_events_say_why(value: bytes, content_type: bytes, reason: str) -> None:
    with pytest.raises(PoisonEvent, match=reason):
        decode(as_record(value, content_type=content_type), 10_000)


def test_oversized_events_are_poison() -> None:
    change = DocumentChange("ws", "d", 1, False, "x" * 5000)
    with pytest.raises(PoisonEvent, match="exceeds the limit"):
        decode(as_record(encode(change).value), 1000)


def test_a_key_that_does_not_match_the_event_is_poison() -> None:
    record = encode(DocumentChange("ws", "doc-1", 1, False, "text"))
    with pytest.raises(PoisonEvent, match="does not match"):
        decode(as_record(record.value, key="ws/other"), 10_000)


@pytest.mark.parametrize(
    ("doc_id", "reason"),
    [
        ("   ", "must contain a visible character"),
        ("\u3000\u00a0", "must contain a visible character"),  # ideographic, no-break space
        ("invoice\u202egpj.exe", "must not contain format characters"),  # right-to-left override
        ("a\u2066b\u2069", "must not contain format characters"),  # isolates
        ("zero\u200bwidth", "must not contain format characters"),
        ("a\x85b", "must not contain control characters"),  # C1 control: next line
    ],
)
def test_events_with_odd_doc_ids_are_poison(doc_id: str, reason: str) -> None:
    record = encode(DocumentChange("ws", doc_id, 1, True))
    with pytest.raises(PoisonEvent, match=f"doc_id {reason}"):
        decode(as_record(record.value, key=record.key), 10_000)


@pytest.mark.parametrize(
    "doc_id", ["a.md", "報告/第一章.md", "مرحبا.txt", "e\u0301.md", "\U0001f642"]
)
def test_ids_in_any_script_are_accepted(doc_id: str) -> None:
    record = encode(DocumentChange("ws", doc_id, 1, True))
    assert decode(as_record(record.value, key=record.key), 10_000).doc_id == doc_id
