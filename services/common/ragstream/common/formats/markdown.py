"""Markdown stays as written, less its YAML front matter, which becomes metadata.

Front matter (a `---` line, YAML, a `---` line, at the very start) describes the document:
its fields (title, author, date, tags, any other) become metadata, so they filter searches
(SearchFilter.metadata) and never become chunk text or entities. A list becomes its items
joined by ", "; a nested mapping is left out (metadata is flat). The title is the front
matter's, else the first `# ` heading. Front matter that is not valid YAML is an error that
names the line, rather than text that would be indexed as prose.
"""

from __future__ import annotations

import datetime
import re

import yaml

from ragstream.common.formats.errors import ConversionError, Converted
from ragstream.common.formats.text import decode_text, one_line

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
MAX_FIELDS = 32
"""Metadata a document carries is capped by the service (64 entries); the file's own fields
leave room for the converter's (format, title, pages) and the caller's."""
MAX_KEY_CHARS = 128
MAX_TAGS = 16


def markdown_document(data: bytes) -> Converted:
    text = decode_text(data)
    front = _FRONT_MATTER.match(text)
    fields = _fields(front.group(1)) if front else {}
    body = text[front.end() :] if front else text
    if "title" not in fields and (heading := _HEADING.search(body)):
        fields["title"] = one_line(heading.group(1))
    return Converted(body.lstrip("\r\n") if front else text, fields)


def _fields(block: str) -> dict[str, str]:
    try:
        parsed = yaml.safe_load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 2})" if mark is not None else ""
        raise ConversionError(f"front matter is not valid YAML{where}: fix or remove it") from None
    if not isinstance(parsed, dict):
        return {}
    fields: dict[str, str] = {}
    for key, value in list(parsed.items())[:MAX_FIELDS]:
        name = one_line(str(key), MAX_KEY_CHARS)
        if isinstance(value, list):
            items = [one_line(_scalar(item)) for item in value if item is not None]
            text = ", ".join(items)
            if name == "tags":  # each tag filters alone too: {"tag:sonar": "true"}
                fields.update((f"tag:{tag}"[:MAX_KEY_CHARS], "true") for tag in items[:MAX_TAGS])
        elif value is None or isinstance(value, dict):
            continue
        else:
            text = _scalar(value)
        if name and (text := one_line(text)):
            fields[name] = text
    return fields


def _scalar(value: object) -> str:
    """YAML reads `date: 2026-03-12` as a date: written back the way the file wrote it."""
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
