"""How a cited passage reads on the command line: its document, pages and section."""

from __future__ import annotations

from ragstream.v1 import query_pb2


def where(first_page: int, last_page: int, section: list[str] | tuple[str, ...]) -> str:
    """ ", p. 2, Results > Sonar" or "" when the passage has no pages and no section."""
    parts = []
    if first_page:
        same = first_page == last_page
        parts.append(f"p. {first_page}" if same else f"pp. {first_page}-{last_page}")
    if section:
        parts.append(" > ".join(section))
    return "".join(f", {part}" for part in parts)


def reference_line(ref: query_pb2.Reference) -> str:
    name = ref.doc_id if not ref.title or ref.title == ref.doc_id else f"{ref.doc_id} ({ref.title})"
    return f"[{ref.reference_id}] {name}{where(ref.first_page, ref.last_page, list(ref.section))}"
