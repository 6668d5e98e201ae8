"""Citations: the context's passages numbered for the prompt, and the references an answer
cites.

A reference names a passage, not just a file: the chunks of one document on the same pages
under the same section share one number, so two passages of one document on different pages
are two references. Numbers follow the order of first appearance in the context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from ragstream.query.types import ContextChunk, Reference

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
"""`[2]` or `[1, 3]`: how the prompt asks the LLM to cite, and how the extractive answer does."""


def passage_key(chunk: ContextChunk) -> tuple[object, ...]:
    where = chunk.provenance
    return (chunk.doc_id, where.first_page, where.last_page, where.section)


def cite(chunks: list[ContextChunk]) -> tuple[list[ContextChunk], list[Reference]]:
    """(Re)numbers the chunks' passages in order of first appearance."""
    refs: dict[tuple[object, ...], Reference] = {}
    members: dict[tuple[object, ...], list[str]] = {}
    cited = []
    for chunk in chunks:
        key = passage_key(chunk)
        ref = refs.get(key)
        if ref is None:
            where = chunk.provenance
            ref = refs[key] = Reference(
                str(len(refs) + 1),
                chunk.doc_id,
                chunk.file_path,
                chunk.title,
                where.first_page,
                where.last_page,
                where.section,
            )
            members[key] = []
        members[key].append(chunk.chunk_id)
        number = ref.reference_id
        cited.append(chunk if chunk.reference_id == number else replace(chunk, reference_id=number))
    return cited, [replace(ref, chunk_ids=tuple(members[key])) for key, ref in refs.items()]


def cited_ids(answer: str) -> list[str]:
    """The reference numbers an answer's `[n]` markers cite, in order of first citation."""
    seen: dict[str, None] = {}
    for match in _MARKER.finditer(answer):
        for number in match.group(1).split(","):
            seen.setdefault(number.strip(), None)
    return list(seen)


def cited_references(answer: str, references: Sequence[Reference]) -> list[Reference]:
    """The references the answer cites, in the order of the reference list; markers naming
    no reference (an LLM's slip) cite nothing."""
    wanted = set(cited_ids(answer))
    return [ref for ref in references if ref.reference_id in wanted]


def reference_label(ref: Reference) -> str:
    """How a reference reads to a person and to the LLM: title or path, pages, section."""
    path = ref.file_path or ref.doc_id
    parts = [f"{ref.title} ({path})" if ref.title and ref.title != path else path]
    if ref.first_page:
        pages = ref.first_page == ref.last_page
        parts.append(f"p. {ref.first_page}" if pages else f"pp. {ref.first_page}-{ref.last_page}")
    if ref.section:
        parts.append(" > ".join(ref.section))
    return ", ".join(parts)
