"""Entity names and types as extractors write them, and the key entities are merged by
(`entity_key`, defined with the other keys in common/models.py, since queries use it too).
"""

from __future__ import annotations

import re

from ragstream.common.models import entity_key

__all__ = ["clean_name", "entity_key", "valid_entity_type"]

MAX_NAME_CHARS = 256
"""Longer names are truncated: a longer "name" is a model putting a description in it."""
MAX_TYPE_CHARS = 64
FORBIDDEN_TYPE_CHARS = frozenset("'()<>|/\\")
"""A type containing one of these is a malformed record (shifted fields, markup), not a type."""

_WHITESPACE = re.compile(r"\s+")
# Wrapping characters a model adds around a name: quotes, markdown emphasis and code marks.
# "#" only leads (a markdown heading): "C#" keeps its sign.
_WRAPPING = "\"'`*_~“”‘’「」『』《》〈〉"
_LEADING = _WRAPPING + "#"
_BRACKETS = {"(": ")", "[": "]", "{": "}", "<": ">", "（": "）", "【": "】", "［": "］"}


def clean_name(name: str) -> str | None:
    """The name without wrapping quotes, brackets or markdown; None when nothing is left.

    Quotes and markdown marks are stripped from both ends; a bracket pair is removed only
    when it wraps the whole name ("(ESIOS)" becomes "ESIOS", "Skua (drone)" stays). Inner
    whitespace, line breaks included, collapses to one space, and the result is cut to
    MAX_NAME_CHARS characters.
    """
    text = _WHITESPACE.sub(" ", name).strip()
    previous = None
    while text and text != previous:
        previous = text
        text = text.lstrip(_LEADING).rstrip(_WRAPPING).strip()
        if _wrapped_in_brackets(text):
            text = text[1:-1].strip()
        text = text[:MAX_NAME_CHARS].rstrip()
    return text or None


def valid_entity_type(entity_type: str) -> str | None:
    """The normalized type, or None when it is not a usable type.

    Normalized: wrapping quotes and markdown stripped, lowercased, inner whitespace runs
    replaced by one underscore ("Natural Object" becomes "natural_object"), so types compare
    and count (type by vote) without spelling noise. None for an empty type, a type longer
    than MAX_TYPE_CHARS, or one containing any of FORBIDDEN_TYPE_CHARS.
    """
    text = entity_type.strip().lstrip(_LEADING).rstrip(_WRAPPING).strip()
    if not text or len(text) > MAX_TYPE_CHARS:
        return None
    if any(char in FORBIDDEN_TYPE_CHARS for char in text):
        return None
    return _WHITESPACE.sub("_", text.lower())


def _wrapped_in_brackets(text: str) -> bool:
    """True when the first character opens a bracket that the last character closes."""
    if len(text) < 2 or _BRACKETS.get(text[0]) != text[-1]:
        return False
    opening, closing = text[0], text[-1]
    depth = 0
    for index, char in enumerate(text):
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index == len(text) - 1
    return False
