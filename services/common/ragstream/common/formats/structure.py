"""The shapes every converter writes structure in, so the chunker and the citations read one
form whatever the file was: Markdown tables and headings, and a form feed between pages.

A page break is "\\n\\f\\n": a paragraph boundary to the chunker, and the mark from which it
counts a chunk's page numbers (common/text/provenance.py). The form feed never reaches a
chunk's text.
"""

from __future__ import annotations

from collections.abc import Sequence

PAGE_BREAK = "\n\f\n"


def markdown_table(rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table, one row per line, the first row as its header. A cell's line breaks
    become spaces and its pipes are escaped, so a row never spills over lines; short rows are
    padded to the widest."""
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    lines = []
    for index, row in enumerate(rows):
        cells = [" ".join(cell.split()).replace("|", "\\|") for cell in row]
        cells += [""] * (width - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
        if index == 0:
            lines.append("|" + "---|" * width)
    return "\n".join(lines)


def markdown_heading(level: int, text: str) -> str:
    return "#" * max(1, min(level, 6)) + " " + " ".join(text.split())
