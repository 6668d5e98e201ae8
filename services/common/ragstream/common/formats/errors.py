"""What a converter returns, and the one error it raises: its message is the reason the file
is not indexed."""

from __future__ import annotations

from dataclasses import dataclass, field


class ConversionError(Exception):
    """The file cannot become a document; the message says why and, where possible, what to
    do about it."""


@dataclass(frozen=True, slots=True)
class Converted:
    text: str
    """Markdown-shaped text: headings as `#`, tables as Markdown tables, pages apart by a
    form feed (structure.py)."""
    metadata: dict[str, str] = field(default_factory=dict)
    """What the file says of itself: title, author, date, tags, pages, where it says so."""
