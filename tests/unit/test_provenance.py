"""Chunk provenance: offsets, page numbers and section paths read from the text, and the
references that name passages."""

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.models import Provenance
from ragstream.common.text.chunking import chunk_text
from ragstream.common.text.provenance import locate
from ragstream.query.citations import cite, cited_references, reference_label
from ragstream.query.types import ContextChunk

PAGES = "Mira Okafor leads the Tern team.\n\f\nKestrel Optics ships lenses.\n\f\nSkua flies."
DOC = """# Tern

Intro to the team.

## Sensors

Mira Okafor leads the Tern sensor team.

```
# not a heading
```

# Skua

The Skua drone flies."""


def test_pages_are_chunked_apart_and_each_chunk_names_its_page() -> None:
    pieces = chunk_text(PAGES, ChunkingConfig())
    assert [p.content for p in pieces] == [
        "Mira Okafor leads the Tern team.",
        "Kestrel Optics ships lenses.",
        "Skua flies.",
    ]
    places = locate(PAGES, [p.content for p in pieces])
    assert [(p.first_page, p.last_page) for p in places] == [(1, 1), (2, 2), (3, 3)]
    assert [PAGES[p.start : p.end] for p in places] == [p.content for p in pieces]


def test_a_text_without_page_breaks_has_no_pages_and_sections_follow_headings() -> None:
    contents = ["Intro to the team.", "## Sensors\n\nMira Okafor leads", "The Skua drone flies."]
    places = locate(DOC, contents)
    assert [p.first_page for p in places] == [0, 0, 0]
    assert [p.section for p in places] == [("Tern",), ("Tern", "Sensors"), ("Skua",)]
    assert DOC[places[1].start : places[1].end] == contents[1]


def test_a_chunk_opening_with_the_previous_sections_overlap_belongs_to_its_heading() -> None:
    (place,) = locate(DOC, ["Intro to the team.\n\n## Sensors\n\nMira Okafor"])
    assert place.section == ("Tern", "Sensors")


def test_an_unchanged_chunk_gets_new_offsets_when_text_before_it_changes() -> None:
    content = "Mira Okafor leads the Tern sensor team."
    (before,) = locate(DOC, [content])
    edited = "# Preface\n\nA new opening paragraph.\n\n" + DOC.split("\n", 1)[1]
    (after,) = locate(edited, [content])
    assert after.start != before.start and after.end - after.start == len(content)
    assert after.section == ("Preface", "Sensors")


def context(doc: str, chunk_id: str, page: int, section: tuple[str, ...] = ()) -> ContextChunk:
    where = Provenance(0, 10, page, page, section)
    return ContextChunk(chunk_id, doc, doc, "text", 1.0, 3, "", f"{doc} title", where)


def test_two_passages_of_one_document_on_different_pages_are_two_references() -> None:
    chunks = [
        context("r.pdf", "a", 2),
        context("r.pdf", "b", 3),
        context("r.pdf", "c", 2),
        context("n.md", "d", 0, ("Tern", "Sensors")),
    ]
    cited, refs = cite(chunks)
    assert [c.reference_id for c in cited] == ["1", "2", "1", "3"]
    assert [(r.doc_id, r.first_page, r.chunk_ids) for r in refs] == [
        ("r.pdf", 2, ("a", "c")),
        ("r.pdf", 3, ("b",)),
        ("n.md", 0, ("d",)),
    ]
    assert reference_label(refs[1]) == "r.pdf title (r.pdf), p. 3"
    assert reference_label(refs[2]) == "n.md title (n.md), Tern > Sensors"


def test_an_answer_cites_exactly_the_references_its_markers_name() -> None:
    _, refs = cite([context("a", "1", 1), context("b", "2", 1), context("c", "3", 1)])
    answer = "Mira leads it [3]. Kestrel ships [1, 3]. Nobody knows [7]."
    assert [r.reference_id for r in cited_references(answer, refs)] == ["1", "3"]
