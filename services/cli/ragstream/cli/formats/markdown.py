"""Markdown stays as written: it is plain text meant to be read as it is, and its headings
and lists help the chunker and the LLM. Only its title is read: the `title:` of a YAML front
matter block, else the first `# ` heading."""

from __future__ import annotations

import re

from ragstream.cli.formats.text import one_line

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.+?)[ \t]*$", re.MULTILINE)
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def markdown_title(text: str) -> str:
    front = _FRONT_MATTER.match(text)
    if front and (found := _FRONT_TITLE.search(front.group(1))):
        return one_line(found.group(1).strip("\"'"))
    heading = _HEADING.search(text, front.end() if front else 0)
    return one_line(heading.group(1)) if heading else ""
