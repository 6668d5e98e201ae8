"""Where each chunk lies in its document: character offsets, page numbers and section path.

Converters write structure in one shape (ragstream/common/formats/structure.py): a form feed
between pages and Markdown `#` headings. A chunk's pages are counted from the form feeds
before its first and last characters; its section is the heading path in force where its
own text begins: at its first heading when it holds one (a chunk that opens with the overlap
of the section before still belongs to the section it introduces), else at its start. A
chunk is found in the text by its content, searching on from the previous chunk's start
(chunks overlap), which holds for every chunking strategy, since each chunk is a stripped
slice of the text. Pure functions.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from ragstream.common.models import Provenance
from ragstream.common.text.chunking import PAGE_BREAK

__all__ = ["PAGE_BREAK", "locate"]
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def locate(text: str, contents: Sequence[str]) -> list[Provenance]:
    """The provenance of each chunk content, in order. A content not found as it is (a
    strategy that rewrote it) gets offsets of its nearest found neighbour before it."""
    breaks = [m.start() for m in re.finditer(PAGE_BREAK, text)]
    headings = _headings(text)
    starts = [offset for offset, _ in headings]
    found: list[Provenance] = []
    cursor = 0
    for content in contents:
        start = text.find(content, cursor)
        if start < 0:
            start = cursor
        end = start + len(content)
        cursor = start + 1
        first = bisect.bisect_left(starts, start, hi=len(starts))
        inside = first < len(starts) and starts[first] < end
        at = starts[first] if inside else start
        found.append(
            Provenance(
                start=start,
                end=end,
                first_page=bisect.bisect_right(breaks, start) + 1 if breaks else 0,
                last_page=bisect.bisect_right(breaks, max(start, end - 1)) + 1 if breaks else 0,
                section=_section_at(headings, starts, at),
            )
        )
    return found


def _headings(text: str) -> list[tuple[int, tuple[str, ...]]]:
    """(offset, the heading path it opens) of each Markdown heading outside code fences."""
    fences = [m.start() for m in _FENCE.finditer(text)]
    path: list[tuple[int, str]] = []
    found = []
    for match in _HEADING.finditer(text):
        if bisect.bisect_right(fences, match.start()) % 2:  # inside a fenced code block
            continue
        level = len(match.group(1))
        path = [(lvl, title) for lvl, title in path if lvl < level]
        path.append((level, " ".join(match.group(2).replace("\f", " ").split())))
        found.append((match.start(), tuple(title for _, title in path)))
    return found


def _section_at(
    headings: Sequence[tuple[int, tuple[str, ...]]], starts: Sequence[int], offset: int
) -> tuple[str, ...]:
    index = bisect.bisect_right(starts, offset) - 1
    return headings[index][1] if index >= 0 else ()
