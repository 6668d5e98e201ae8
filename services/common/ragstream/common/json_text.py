"""JSON text on the hot paths: the embedded stores' rows, the event log's headers, and the
bodies of the HTTP model endpoints, by orjson (README, "Indexing in several processes").

`dumps` writes what `json.dumps(value, ensure_ascii=False, separators=(",", ":"))` writes
for strings, integers, booleans, None, lists and dicts (keys that are not strings become
strings, as there), so rows written before and after read the same; some floats are spelled
otherwise ("1e-5" for "1e-05"), the same numbers. `loads` reads any JSON text, and its error
is a ValueError, as `json.loads`'s is; an integer beyond 64 bits comes back as a float, as
orjson reads it (json would read it exactly; checking every text for one cost the indexer
about a tenth more CPU, README).
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


def loads(text: str | bytes) -> Any:
    return orjson.loads(text)
