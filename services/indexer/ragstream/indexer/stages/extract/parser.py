"""Parse an LLM's extraction output into entity and relation records.

Two formats are accepted, in the same text even:

- current: one record per line, fields separated by ``<|#|>``::

      entity<|#|>name<|#|>type<|#|>description
      relation<|#|>source<|#|>target<|#|>keywords<|#|>description[<|#|>weight]
      <|COMPLETE|>

- legacy: records in parentheses with quoted fields separated by ``<|>``, records separated
  by ``##``; relationship fields are source, target, description, keywords, strength::

      ("entity"<|>"name"<|>"type"<|>"description")##
      ("relationship"<|>"source"<|>"target"<|>"description"<|>"keywords"<|>8)

Models drift from any format, so the parser is lenient where the intent is clear and drops a
record (with a warning) where it is not: "relationship" is read as "relation"; records glued
onto one line are split again; wrapping quotes, brackets, bullets and numbering are stripped;
self-loops are dropped; full-width commas in keywords become commas; entity types containing
any of '()<>|/\\ drop their record (they are shifted fields, not types); names are cut to 256
characters; a missing end marker is a warning. Only output with no record at all and no end
marker raises ExtractionFormatError: that is prose, not extraction output.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragstream.indexer.stages.extract.names import clean_name, entity_key, valid_entity_type
from ragstream.indexer.stages.extract.records import ExtractedEntity, ExtractedRelation

TUPLE_DELIMITER = "<|#|>"
COMPLETION_MARKER = "<|COMPLETE|>"
LEGACY_TUPLE_DELIMITER = "<|>"
LEGACY_RECORD_DELIMITER = "##"

_MARKER = re.compile(r"<\|\s*complete\s*\|>", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d{1,3}[.)])\s+")
_LEGACY_GLUE = re.compile(r"(?<=\))\s*(?=\(\s*[\"']?(?:entity|relationship|relation)\b)", re.I)
_TRAILING_KEYWORD = re.compile(
    r"(?<![\w])[\"'(]*(entity|relationship|relation)[\"']?\s*$", re.IGNORECASE
)
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」"}
_KEYWORD_SEPARATORS = str.maketrans({"，": ",", "、": ","})
# Every character str.splitlines() breaks at: none may remain inside a record.
_LINE_BREAKS = str.maketrans(dict.fromkeys("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029", " "))
_KEYWORDS = {"entity": "entity", "relation": "relation", "relationship": "relation"}
_FIELDS_NEEDED = {"entity": 4, "relation": 5}


class ExtractionFormatError(ValueError):
    """The output holds no extraction record and no end marker: prose or garbage."""


@dataclass(frozen=True, slots=True)
class ParseResult:
    entities: tuple[ExtractedEntity, ...]
    relations: tuple[ExtractedRelation, ...]
    warnings: tuple[str, ...]
    complete: bool
    """The end marker was present (the output was not cut off)."""


@dataclass(frozen=True, slots=True)
class _RawRecord:
    legacy: bool
    fields: list[str]


def parse_extraction(text: str) -> ParseResult:
    """Entities and relations of `text`, in output order; never fails on a record's content."""
    match = _MARKER.search(text)
    body = text if match is None else text[: match.start()]
    warnings: list[str] = []
    raw = _raw_records(body, warnings)
    if not raw and match is None:
        raise ExtractionFormatError(
            f"extraction output has no records and no {COMPLETION_MARKER} marker: "
            f"{_preview(text)!r}"
        )
    if match is None:
        warnings.append(f"missing end marker {COMPLETION_MARKER}: the output may be cut off")
    entities: list[ExtractedEntity] = []
    relations: list[ExtractedRelation] = []
    for record in raw:
        kind = _keyword(record.fields[0])
        fields = record.fields[1:]
        if kind == "entity":
            entity = _entity(fields, warnings)
            entities.extend([entity] if entity else [])
        elif kind == "relation":
            relation = _relation(fields, record.legacy, warnings)
            relations.extend([relation] if relation else [])
        elif kind is None:
            warnings.append(f"unknown record kind, dropped: {_preview(record.fields[0])!r}")
    return ParseResult(tuple(entities), tuple(relations), tuple(warnings), match is not None)


def format_records(
    entities: Iterable[ExtractedEntity],
    relations: Iterable[ExtractedRelation],
    *,
    complete: bool = True,
) -> str:
    """The current format, as the prompts show it; parse_extraction reads it back unchanged.

    Line breaks inside a field become spaces (a record is one line). A relation's weight is
    written only when it differs from the default 1.0. Raises ValueError for a field that
    contains a delimiter or the end marker, which no reader could split correctly.
    """
    lines = [_line("entity", entity.name, entity.type, entity.description) for entity in entities]
    for relation in relations:
        fields = [relation.source, relation.target, relation.keywords, relation.description]
        if relation.weight != 1.0:
            fields.append(repr(relation.weight))
        lines.append(_line("relation", *fields))
    if complete:
        lines.append(COMPLETION_MARKER)
    return "\n".join(lines)


def _line(kind: str, *fields: str) -> str:
    cleaned = [field.translate(_LINE_BREAKS) for field in fields]
    for field in cleaned:
        if TUPLE_DELIMITER in field or _MARKER.search(field):
            raise ValueError(f"a record field cannot contain {TUPLE_DELIMITER} or the end marker")
    return TUPLE_DELIMITER.join([kind, *cleaned])


def _raw_records(body: str, warnings: list[str]) -> list[_RawRecord]:
    records: list[_RawRecord] = []
    for line in body.splitlines():
        stripped = _BULLET.sub("", line.strip())
        if not stripped or stripped.startswith("```"):
            continue
        if TUPLE_DELIMITER in stripped:
            fields = _trim_empty_tail(stripped.split(TUPLE_DELIMITER))
            records.extend(_RawRecord(False, part) for part in _split_glued(fields))
        elif LEGACY_TUPLE_DELIMITER in stripped:
            records.extend(_legacy_records(stripped))
        elif stripped.strip("#"):
            warnings.append(f"ignored a line that is not a record: {_preview(stripped)!r}")
    return records


def _legacy_records(line: str) -> list[_RawRecord]:
    records: list[_RawRecord] = []
    for piece in line.split(LEGACY_RECORD_DELIMITER):
        for record in _LEGACY_GLUE.split(piece):
            text = record.strip()
            if text.startswith("(") and text.endswith(")"):
                text = text[1:-1]
            fields = _trim_empty_tail(text.split(LEGACY_TUPLE_DELIMITER))
            if any(field.strip() for field in fields):
                records.extend(_RawRecord(True, part) for part in _split_glued(fields))
    return records


def _split_glued(fields: list[str]) -> list[list[str]]:
    """Splits fields where a new record starts without a line break before it.

    A record may only end once it has all its fields, and a new one must have at least two
    fields after its keyword; so a name or a description that happens to be (or end with)
    the word "entity" is not mistaken for a record boundary.
    """
    records: list[list[str]] = []
    current: list[str] = []
    for index, field in enumerate(fields):
        follows = len(fields) - index - 1
        if _complete(current) and follows >= 2 and _keyword(field):
            records.append(current)
            current = [field]
            continue
        glued = _TRAILING_KEYWORD.search(field)
        if glued and glued.start() > 0 and follows >= 2 and _complete([*current, ""]):
            current.append(field[: glued.start()])
            records.append(current)
            current = [glued.group(1)]
            continue
        current.append(field)
    if current:
        records.append(current)
    if records and records[0] and records[0][0].lstrip().startswith("("):
        records[-1][-1] = records[-1][-1].rstrip().removesuffix(")")
    return records


def _complete(fields: list[str]) -> bool:
    needed = _FIELDS_NEEDED.get(_keyword(fields[0]) or "") if fields else None
    return needed is not None and len(fields) >= needed


def _keyword(field: str) -> str | None:
    word = field.strip().lstrip("(").strip().strip("\"'*").strip().lower()
    if word == "content_keywords":
        return "content_keywords"  # legacy high-level keywords: not an entity or relation
    return _KEYWORDS.get(word)


def _entity(fields: list[str], warnings: list[str]) -> ExtractedEntity | None:
    if len(fields) < 2:
        warnings.append(f"entity record without a type, dropped: {_preview(_join(fields))!r}")
        return None
    name = clean_name(fields[0])
    if name is None:
        warnings.append("entity record with an empty name, dropped")
        return None
    raw_type = _unquote(fields[1])
    entity_type = valid_entity_type(raw_type) if raw_type else "unknown"
    if entity_type is None:
        warnings.append(f"entity {name!r}: invalid type {_preview(raw_type)!r}, dropped")
        return None
    if len(fields) > 3:
        warnings.append(f"entity {name!r}: {len(fields)} fields, extra ones kept as description")
    return ExtractedEntity(name, entity_type, _join(fields[2:]))


def _relation(fields: list[str], legacy: bool, warnings: list[str]) -> ExtractedRelation | None:
    weight = 1.0
    if len(fields) >= (4 if legacy else 5) and _number(fields[-1]) is not None:
        weight = _weight(fields.pop(), warnings)
    if len(fields) < 3:
        preview = _preview(_join(fields))
        warnings.append(f"relation record with too few fields, dropped: {preview!r}")
        return None
    source, target = clean_name(fields[0]), clean_name(fields[1])
    if source is None or target is None:
        warnings.append("relation record with an empty endpoint, dropped")
        return None
    if entity_key(source) == entity_key(target):
        warnings.append(f"relation of {source!r} with itself, dropped")
        return None
    rest = fields[2:]
    if len(rest) == 1:
        keywords, description = "", rest[0]
    elif legacy:
        keywords, description = rest[-1], _join(rest[:-1])
    else:
        keywords, description = rest[0], _join(rest[1:])
    return ExtractedRelation(source, target, _keywords(keywords), _unquote(description), weight)


def _keywords(text: str) -> str:
    seen: dict[str, str] = {}
    for part in _unquote(text).translate(_KEYWORD_SEPARATORS).split(","):
        keyword = _unquote(part)
        if keyword and keyword.casefold() not in seen:
            seen[keyword.casefold()] = keyword
    return ", ".join(seen.values())


def _number(text: str) -> float | None:
    try:
        return float(_unquote(text))
    except ValueError:
        return None


def _weight(text: str, warnings: list[str]) -> float:
    value = _number(text)
    if value is None or not math.isfinite(value) or value < 0:
        warnings.append(f"relation weight {_preview(text)!r} is not a number >= 0; 1.0 used")
        return 1.0
    return value


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _join(fields: list[str]) -> str:
    return " ".join(part for part in (_unquote(field) for field in fields) if part)


def _trim_empty_tail(fields: list[str]) -> list[str]:
    while len(fields) > 1 and not fields[-1].strip():
        fields.pop()
    return fields


def _preview(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
