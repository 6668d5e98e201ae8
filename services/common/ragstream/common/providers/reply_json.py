"""The JSON object in a model's reply, read as models write it."""

from __future__ import annotations

import json
import re
from typing import Any

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def json_object(text: str) -> dict[str, Any] | None:
    """The reply's outermost JSON object, tolerant of code fences, prose around it and
    trailing commas; None when it holds none."""
    match = _OBJECT.search(text)
    if not match:
        return None
    try:
        data = json.loads(_TRAILING_COMMA.sub(r"\1", match.group(0)))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None
