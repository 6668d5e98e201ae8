"""The checks a request field's value can be held to: each yields its problems.

A check takes the value and the configured `Limits` and yields (path suffix, description)
pairs, none when the value is fine; `validation.RULES` assigns them to fields. Descriptions
never quote the value (see `validation`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.descriptor import EnumDescriptor
from google.protobuf.timestamp_pb2 import Timestamp

from ragstream.common import events
from ragstream.common.config import WORKSPACE_PATTERN
from ragstream.query.transport.convert import decode_page_token

MAX_PAGE_TOKEN_CHARS = 4096
_TIMESTAMP_SECONDS = (-62_135_596_800, 253_402_300_799)  # 0001-01-01 .. 9999-12-31
_WORKSPACE = re.compile(WORKSPACE_PATTERN)


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits that come from configuration rather than from the API."""

    max_document_bytes: int


Problem = tuple[str, str]
"""(suffix appended to the field's path, e.g. "[3]" or "", description)."""
Check = Callable[[Any, Limits], Iterator[Problem]]
CrossCheck = Callable[[Any], Iterator[Problem]]
"""A rule across fields of one message; the suffix is the path of the field to blame."""


def length(low: int, high: int) -> Check:
    expected = f"{low} to {high}" if low else f"at most {high}"

    def check(value: str, limits: Limits) -> Iterator[Problem]:
        if not low <= len(value) <= high:
            yield "", f"must have {expected} characters"

    return check


def not_blank(value: str, limits: Limits) -> Iterator[Problem]:
    if not value.strip():
        yield "", "must not be empty"


def no_control_characters(value: str, limits: Limits) -> Iterator[Problem]:
    if events.has_control_characters(value):
        yield "", "must not contain control characters"


def no_format_characters(value: str, limits: Limits) -> Iterator[Problem]:
    if events.has_format_characters(value):
        yield "", "must not contain format characters (bidi controls, zero-width characters)"


def visible(value: str, limits: Limits) -> Iterator[Problem]:
    if value and not events.has_visible_character(value):
        yield "", "must contain a visible character"


def workspace(value: str, limits: Limits) -> Iterator[Problem]:
    """Empty means the server's default workspace."""
    if value and not _WORKSPACE.match(value):
        yield "", "must be 1-64 letters, digits, '_' or '-', starting with a letter or digit"


def in_range(low: float, high: float) -> Check:
    def check(value: float, limits: Limits) -> Iterator[Problem]:
        # Written so that NaN fails too.
        if not low <= value <= high:
            yield "", f"must be between {low} and {high}"

    return check


def zero_or_range(low: int, high: int) -> Check:
    """0 takes the server default; anything else must lie in [low, high]."""

    def check(value: int, limits: Limits) -> Iterator[Problem]:
        if value != 0 and not low <= value <= high:
            yield "", f"must be 0 (server default) or between {low} and {high}"

    return check


def non_negative(value: int, limits: Limits) -> Iterator[Problem]:
    if value < 0:
        yield "", "must not be negative"


def finite(value: float, limits: Limits) -> Iterator[Problem]:
    if not math.isfinite(value):
        yield "", "must be a finite number"


def known(enum: EnumDescriptor) -> Check:
    """The value is one the proto defines (proto3 accepts unknown enum numbers on the wire)."""
    names = ", ".join(value.name for value in enum.values)

    def check(value: int, limits: Limits) -> Iterator[Problem]:
        if value not in enum.values_by_number:
            yield "", f"must be one of {names}"

    return check


def one_of(allowed: Iterable[str]) -> Check:
    choices = tuple(allowed)
    listed = ", ".join(repr(choice) for choice in choices)

    def check(value: str, limits: Limits) -> Iterator[Problem]:
        if value not in choices:
            yield "", f"must be one of {listed}"

    return check


def count(low: int, high: int) -> Check:
    def check(value: Sequence[Any], limits: Limits) -> Iterator[Problem]:
        if not low <= len(value) <= high:
            yield "", f"must have {low} to {high} entries"

    return check


def each(*checks: Check) -> Check:
    """Applies `checks` to every element of a repeated scalar field (`[i]` in the path)."""

    def check(values: Sequence[Any], limits: Limits) -> Iterator[Problem]:
        for index, value in enumerate(values):
            for inner in checks:
                for suffix, description in inner(value, limits):
                    yield f"[{index}]{suffix}", description

    return check


def mapping(max_entries: int, keys: Sequence[Check], values: Sequence[Check]) -> Check:
    """Checks every key and value of a map field. The path names the map, never the key: a
    key is caller data and must not be echoed."""

    def check(entries: Mapping[str, str], limits: Limits) -> Iterator[Problem]:
        if len(entries) > max_entries:
            yield "", f"must have at most {max_entries} entries"
            return
        for key, value in entries.items():
            for description in _first(keys, key, limits):
                yield "", f"every key {description}"
            for description in _first(values, value, limits):
                yield "", f"every value {description}"

    return check


def _first(checks: Sequence[Check], value: Any, limits: Limits) -> Iterator[str]:
    for check in checks:
        for _, description in check(value, limits):
            yield description
            return


def timestamp(value: Timestamp, limits: Limits) -> Iterator[Problem]:
    low, high = _TIMESTAMP_SECONDS
    if not (low <= value.seconds <= high and 0 <= value.nanos < 1_000_000_000):
        yield "", "must be a valid timestamp (years 1 to 9999, nanos 0 to 999999999)"


def content_size(value: str, limits: Limits) -> Iterator[Problem]:
    if len(value.encode()) > limits.max_document_bytes:
        yield "", f"must be at most {limits.max_document_bytes} bytes"


def page_token(value: str, limits: Limits) -> Iterator[Problem]:
    if len(value) > MAX_PAGE_TOKEN_CHARS:
        yield "", "is not a token from ListDocuments"
        return
    try:
        decode_page_token(value)
    except ValueError:
        yield "", "is not a token from ListDocuments"


def unique_ids(field: str) -> CrossCheck:
    def check(ids: Sequence[str]) -> Iterator[Problem]:
        seen: dict[str, int] = {}
        for index, doc_id in enumerate(ids):
            if doc_id in seen:
                yield f"{field}[{index}]", f"repeats {field}[{seen[doc_id]}]"
            seen.setdefault(doc_id, index)

    return check
