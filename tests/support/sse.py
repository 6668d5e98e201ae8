"""Server-sent events decoded as the HTML specification's event-stream interpretation says,
so a test reads a stream the way a conforming client does, not the way the server wrote it.

Lines end at CRLF, LF or CR; an empty line dispatches the event; `field: value` loses one
space after the colon; `data` lines join with LF; lines starting with a colon are comments;
an event without data is not dispatched, nor is one the stream ends before its empty line.
"""

from __future__ import annotations

import re

LINE_END = re.compile(r"\r\n|\r|\n")


def events(stream: str) -> list[tuple[str, str]]:
    """(event type, data) of each event dispatched from `stream`, in order."""
    found: list[tuple[str, str]] = []
    data: list[str]
    name, data = "", []  # the event type and data lines of the event being read
    for line in LINE_END.split(stream):
        if not line:
            if data:
                found.append((name or "message", "\n".join(data)))
            name, data = "", []
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return found
