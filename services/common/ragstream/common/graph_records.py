"""Curated graph records: entities and relations a team already holds, as JSON Lines.

One format on both sides of the bus: `ragstream import-graph` reads a file of them (each
line also names its `source_id`), and a graph source's document event carries its records
as lines of the same objects without it (the source is the document). Parsing is strict:
an unknown field, a missing or mistyped one, or a bad value is a RecordError naming the
line and the field, so a file is either wholly understood or not sent.

    {"kind": "entity", "source_id": "crm", "name": "Kestrel Polymers", "type": "organization",
     "description": "Makes battery seals."}
    {"kind": "relation", "source_id": "crm", "source": "Kestrel Polymers", "target": "Tern S3",
     "keywords": "supplier", "description": "Supplies the Tern S3's seals.", "weight": 2}
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from ragstream.common.events import doc_id_problems
from ragstream.common.models import entity_key

MAX_NAME_CHARS = 256
MAX_TEXT_CHARS = 8000
SOURCE_ID = "source_id"
_TEXTS = {"type": 64, "description": MAX_TEXT_CHARS, "keywords": 1000}


@dataclass(frozen=True, slots=True)
class CuratedEntity:
    name: str
    type: str = ""
    description: str = ""


@dataclass(frozen=True, slots=True)
class CuratedRelation:
    source: str
    target: str
    description: str = ""
    keywords: str = ""
    weight: float = 1.0


Record = CuratedEntity | CuratedRelation
_FIELDS: dict[str, dict[str, Any]] = {
    "entity": {"name": str, "type": str, "description": str},
    "relation": {
        "source": str,
        "target": str,
        "description": str,
        "keywords": str,
        "weight": float,
    },
}
_REQUIRED = {"entity": ("name",), "relation": ("source", "target")}


class RecordError(ValueError):
    """A record the format refuses: its line (1-based) and the field at fault."""

    def __init__(self, line: int, field: str, problem: str) -> None:
        super().__init__(f"line {line}: {field} {problem}")
        self.line, self.field, self.problem = line, field, problem


def parse_line(text: str, line: int, with_source: bool) -> tuple[str, Record]:
    """(source id, record) of one line; the source id is "" when `with_source` is false."""
    try:
        data = json.loads(text)
    except ValueError:
        raise RecordError(line, "(line)", "is not a JSON object") from None
    if not isinstance(data, dict):
        raise RecordError(line, "(line)", "is not a JSON object")
    kind = data.pop("kind", None)
    if kind not in _FIELDS:
        raise RecordError(line, "kind", 'must be "entity" or "relation"')
    source = _source(data, line) if with_source else ""
    for name in data:
        if name not in _FIELDS[kind]:
            allowed = ", ".join(["kind", *([SOURCE_ID] if with_source else []), *_FIELDS[kind]])
            raise RecordError(line, name, f"is not a field of a {kind} (fields: {allowed})")
    for name in _REQUIRED[kind]:
        if name not in data:
            raise RecordError(line, name, "is missing")
    values: dict[str, Any] = {name: _value(name, value, line) for name, value in data.items()}
    if kind == "entity":
        return source, CuratedEntity(**values)
    relation = CuratedRelation(**values)
    if entity_key(relation.source) == entity_key(relation.target):
        raise RecordError(line, "target", "names the same entity as source")
    return source, relation


def _source(data: dict[str, Any], line: int) -> str:
    source = data.pop(SOURCE_ID, None)
    if not isinstance(source, str) or not source.strip():
        raise RecordError(line, SOURCE_ID, "must be a non-empty string")
    for problem in doc_id_problems(source):
        raise RecordError(line, SOURCE_ID, problem)
    return source


def _value(name: str, value: object, line: int) -> str | float:
    if name == "weight":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RecordError(line, name, "must be a number")
        if not math.isfinite(value) or value <= 0:
            raise RecordError(line, name, "must be a finite number above 0")
        return float(value)
    if not isinstance(value, str):
        raise RecordError(line, name, "must be a string")
    limit = _TEXTS.get(name, MAX_NAME_CHARS)
    if len(value) > limit:
        raise RecordError(line, name, f"must have at most {limit} characters")
    if name in ("name", "source", "target") and not entity_key(value):
        raise RecordError(line, name, "must not be blank")
    return value


def to_line(record: Record) -> str:
    """The record as one line of a graph source's content (no source id: the document is)."""
    kind = "entity" if isinstance(record, CuratedEntity) else "relation"
    return json.dumps({"kind": kind, **asdict(record)}, ensure_ascii=False, sort_keys=True)


def parse_content(content: str) -> list[Record]:
    """The records of a graph source's content (blank lines skipped)."""
    return [
        parse_line(text, number, with_source=False)[1]
        for number, text in enumerate(content.splitlines(), 1)
        if text.strip()
    ]
