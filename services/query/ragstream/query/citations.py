"""Citations: the context's source documents numbered for the prompt and the references."""

from __future__ import annotations

from dataclasses import replace

from ragstream.query.types import ContextChunk, Reference


def cite(chunks: list[ContextChunk]) -> tuple[list[ContextChunk], list[Reference]]:
    """(Re)numbers the chunks' documents in order of first appearance."""
    refs: dict[str, Reference] = {}
    cited = []
    for chunk in chunks:
        ref = refs.setdefault(
            chunk.doc_id, Reference(str(len(refs) + 1), chunk.doc_id, chunk.file_path)
        )
        cited.append(replace(chunk, reference_id=ref.reference_id))
    return cited, list(refs.values())
