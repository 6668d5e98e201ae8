"""SearchRecord <-> Elasticsearch document, and the document ids.

Ids are deterministic (`<workspace>/<record id>`), so a replayed write replaces the same
document instead of adding a twin. Elasticsearch caps `_id` at 512 bytes; a longer one (a
relation key of two long entity names) is replaced by a digest of it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragstream.common.models import NO_VECTOR, SearchRecord, Vector

MAX_ID_BYTES = 512


def doc_id(workspace: str, record_id: str) -> str:
    plain = f"{workspace}/{record_id}"
    if len(plain.encode()) <= MAX_ID_BYTES:
        return plain
    return f"{workspace}/sha256:{hashlib.sha256(record_id.encode()).hexdigest()}"


def metadata_pairs(metadata: Mapping[str, str]) -> list[str]:
    """Each pair as one keyword: `["key","value"]` in compact JSON (see mappings.py)."""
    return [metadata_pair(key, value) for key, value in sorted(metadata.items())]


def metadata_pair(key: str, value: str) -> str:
    return json.dumps([key, value], ensure_ascii=False, separators=(",", ":"))


def encode_vector(vector: Vector) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(encoded: str) -> Vector:
    return np.frombuffer(base64.b64decode(encoded), dtype="<f4").astype(np.float32)


def to_source(record: SearchRecord, vector: Vector) -> dict[str, Any]:
    """The document of a record; `vector` is the normalized one from `vectors.unit_vector`.

    A zero vector (a text without content) has no direction: it is kept for reads but not
    put into the kNN graph, so dense search never returns it.
    """
    source: dict[str, Any] = {
        "workspace": record.workspace,
        "id": record.id,
        "text": record.text,
        "terms": list(record.terms),
        "vector_b64": encode_vector(vector),
        "doc_ids": list(record.doc_ids),
        "metadata": dict(record.metadata),
        "metadata_kv": metadata_pairs(record.metadata),
        "timestamp": None if record.timestamp is None else float(record.timestamp),
        "attrs": dict(record.attrs),
    }
    if np.any(vector):
        source["vector"] = vector.tolist()
    return source


HIT_EXCLUDES = ["terms", "vector", "vector_b64"]
"""Fields a hit's record goes without (see models.Hit); kNN hits keep vector_b64 to be
scored exactly."""


def hit_record(source: Mapping[str, Any]) -> SearchRecord:
    """A hit's record (no terms, no vector) from a document read without HIT_EXCLUDES."""
    return SearchRecord(
        id=source["id"],
        workspace=source["workspace"],
        text=source["text"],
        terms=(),
        vector=NO_VECTOR,
        doc_ids=tuple(source["doc_ids"]),
        metadata=dict(source["metadata"]),
        timestamp=source.get("timestamp"),
        attrs=dict(source["attrs"]),
    )


def from_source(source: Mapping[str, Any]) -> SearchRecord:
    return SearchRecord(
        id=source["id"],
        workspace=source["workspace"],
        text=source["text"],
        terms=tuple(source["terms"]),
        vector=decode_vector(source["vector_b64"]),
        doc_ids=tuple(source["doc_ids"]),
        metadata=dict(source["metadata"]),
        timestamp=source.get("timestamp"),
        attrs=dict(source["attrs"]),
    )


def unique_terms(terms: Sequence[str]) -> list[str]:
    """Query terms without blanks and duplicates, in first-seen order (as the embedded store)."""
    return list(dict.fromkeys(term for term in terms if term.strip()))
