"""JSON text on the hot paths: the embedded stores' rows, the event log's headers, and the
bodies of the HTTP model endpoints, by orjson (README, "Indexing in several processes").

`dumps` writes what `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes
for strings, integers, booleans, None, lists and dicts (keys that are not strings become
strings, as there), so rows written before and after read the same; some floats are spelled
otherwise ("1e-5" for "1e-05"), the same numbers. `loads` reads any JSON text as `json.loads`
does, integers beyond 64 bits exact (orjson reads them as floats), and its error is a
ValueError, as `json.loads`'s is.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def dumps(value: object) -> str:
    return dumps_bytes(value).decode()


def dumps_bytes(value: object) -> bytes:
    """`dumps` as UTF-8 bytes, for a request body."""
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:
        # What orjson refuses and json writes (an integer beyond 64 bits) is written as
        # json writes it; what neither writes raises json's error.
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


_DIGITS = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_DIGITS = b"0" * 19
"""Digits all read as "0", a run of 19 of them may be an integer beyond 64 bits (-2**63 - 1
has 19): a translation and a substring search, both in C, find it."""


def loads(text: str | bytes) -> Any:
    raw = text.encode() if isinstance(text, str) else text
    if _LONG_DIGITS in raw.translate(_DIGITS):
        return json.loads(raw)
    return orjson.loads(raw)
