"""`ragstream query --context-only` for a person: what retrieval found, section by section.

Keywords, then entities, relations and text chunks in the order the service ranked them,
each chunk in full under its reference number and document, so a reader can check what an
answer would be grounded on. `--json` prints the response with every field instead.
"""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.markup import escape

from ragstream.cli.references import where
from ragstream.v1 import query_pb2

DESCRIPTION_CHARS = 240


def print_context(response: query_pb2.QueryResponse, out: Console) -> None:
    context = response.context
    keywords = context.keywords
    if keywords.high_level or keywords.low_level:
        out.print(f"[bold]Keywords[/bold] high: {escape(', '.join(keywords.high_level))}")
        out.print(f"         low: {escape(', '.join(keywords.low_level))}")
    if context.entities:
        out.print(f"[bold]Entities[/bold] ({len(context.entities)})")
        for entity in context.entities:
            kind = f" ({escape(entity.type)})" if entity.type else ""
            out.print(f"  [cyan]{escape(entity.name)}[/cyan]{kind}: {_flat(entity.description)}")
    if context.relations:
        out.print(f"[bold]Relations[/bold] ({len(context.relations)})")
        for rel in context.relations:
            ends = f"[cyan]{escape(rel.source)}[/cyan] – [cyan]{escape(rel.target)}[/cyan]"
            out.print(f"  {ends}: {_flat(rel.description)}")
    out.print(f"[bold]Chunks[/bold] ({len(context.chunks)})")
    for chunk in context.chunks:
        place = escape(where(chunk.first_page, chunk.last_page, list(chunk.section)))
        out.print(f"  [{chunk.reference_id}] [green]{escape(chunk.doc_id)}[/green]{place}", end="")
        out.print(f" [dim](score {chunk.score:.3f})[/dim]")
        out.print(textwrap.indent(escape(chunk.content.strip()), "      "))
    if not context.chunks and not context.entities and not context.relations:
        out.print("  nothing found")
    for note in response.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}")


def _flat(text: str) -> str:
    """A description on one line, shortened at a word: merged from every chunk that names
    the entity, it can run to pages; `--json` has it whole."""
    return escape(textwrap.shorten(text, DESCRIPTION_CHARS, placeholder=" …"))
