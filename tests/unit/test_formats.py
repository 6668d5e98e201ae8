import io
from pathlib import Path

import docx
import pytest
from pypdf import PdfWriter

from ragstream.cli.files import read_all
from ragstream.common.formats import ConversionError, convert
from tests.support.documents import (
    BLOG_ARTICLE,
    BLOG_BOILERPLATE,
    BLOG_PAGE,
    corrupt_pdf_bytes,
    docx_bytes,
    pdf_bytes,
)

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Tern &amp; Skua</title>
<style>body { color: red }</style><script>var note = "<p>not text</p>";</script></head>
<body><nav><a href="/">Home</a></nav><h1>The <em>Tern</em> project</h1>
<p>Mira   Okafor
 leads the <b>Tern</b> team &mdash; since 2021.</p>
<ul>
  <li>hull</li>
  <li>sonar</li>
</ul>
<table><tr><th>name</th><th>role</th></tr><tr><td>Mira</td><td>lead</td></tr></table>
<pre>  keep
    indent</pre><!-- a comment --></body></html>"""


def test_pdf_pages_become_text_apart_by_page_breaks_with_title_and_page_count() -> None:
    data = pdf_bytes(["Mira Okafor leads the Tern team.", "Sonar trials (2021)."], "Tern report")
    converted = convert(Path("report.pdf"), data)
    assert converted.text == "Mira Okafor leads the Tern team.\n\f\nSonar trials (2021)."
    assert converted.metadata == {"format": "pdf", "title": "Tern report", "pages": "2"}


def test_a_pdf_without_a_title_is_named_by_its_file() -> None:
    converted = convert(Path("field-notes.pdf"), pdf_bytes(["Sonar trials."]))
    assert converted.metadata["title"] == "field-notes"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (corrupt_pdf_bytes(), "damaged PDF"),
        (pdf_bytes(["Mira Okafor leads the Tern team."])[:300], "damaged PDF"),
        (b"Just text, named like a PDF.", "not a PDF"),
    ],
    ids=["garbage", "truncated", "text"],
)
def test_a_damaged_or_fake_pdf_is_an_error(data: bytes, reason: str) -> None:
    with pytest.raises(ConversionError, match=reason):
        convert(Path("bad.pdf"), data)


def test_an_encrypted_or_scanned_pdf_says_what_to_do() -> None:
    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    blank = io.BytesIO()
    writer.write(blank)
    with pytest.raises(ConversionError, match="no text layer"):
        convert(Path("scan.pdf"), blank.getvalue())
    writer.encrypt("secret", algorithm="RC4-128")
    locked = io.BytesIO()
    writer.write(locked)
    with pytest.raises(ConversionError, match="encrypted PDF"):
        convert(Path("locked.pdf"), locked.getvalue())


def test_docx_headings_and_tables_become_markdown_one_row_per_line() -> None:
    table = [["Supplier", "On-time rate"], ["Boreal Packaging", "83%"], ["Kestrel | Optics", "97%"]]
    data = docx_bytes("Tern notes", ["Mira Okafor leads the Tern team."], table)
    converted = convert(Path("notes.docx"), data)
    assert converted.text == (
        "# Tern notes\n\nMira Okafor leads the Tern team.\n\n"
        "| Supplier | On-time rate |\n|---|---|\n| Boreal Packaging | 83% |\n"
        "| Kestrel \\| Optics | 97% |"
    )
    assert converted.metadata["format"] == "docx"
    assert converted.metadata["title"] == "Tern notes"


def test_docx_page_breaks_become_page_breaks() -> None:
    document = docx.Document()
    document.add_paragraph("Page one: Mira Okafor.")
    document.add_page_break()  # type: ignore[no-untyped-call]
    document.add_heading("Second", level=2)
    document.add_paragraph("Page two: Kestrel Optics.")
    out = io.BytesIO()
    document.save(out)
    converted = convert(Path("paged.docx"), out.getvalue())
    assert converted.text == "Page one: Mira Okafor.\n\f\n## Second\n\nPage two: Kestrel Optics."


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"PK\x03\x04 not really a zip", "not a DOCX"), (b"plain text", "not a DOCX")],
)
def test_a_damaged_docx_is_an_error(data: bytes, reason: str) -> None:
    with pytest.raises(ConversionError, match=reason):
        convert(Path("bad.docx"), data)


def test_a_zip_that_is_no_word_document_is_an_error() -> None:
    import zipfile

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("hello.txt", "hello")
    with pytest.raises(ConversionError, match="damaged DOCX"):
        convert(Path("bad.docx"), archive.getvalue())


def test_a_short_html_page_becomes_its_whole_text_less_navigation() -> None:
    converted = convert(Path("page.html"), PAGE.encode())
    assert converted.text == (
        "The Tern project\n\nMira Okafor leads the Tern team — since 2021.\n\n"
        "hull\nsonar\n\n| name | role |\n|---|---|\n| Mira | lead |\n\n  keep\n    indent"
    )
    # trafilatura's reading of the title: the page's heading before its <title>.
    assert converted.metadata == {"format": "html", "title": "The Tern project"}


def test_an_html_article_keeps_its_text_headings_and_tables_and_drops_the_boilerplate() -> None:
    converted = convert(Path("blog.html"), BLOG_PAGE.encode())
    for piece in BLOG_ARTICLE:
        assert piece in converted.text
    kept = [piece for piece in BLOG_BOILERPLATE if piece in converted.text]
    assert kept == []
    assert "\n## Suppliers\n" in converted.text
    assert "| Supplier | On-time rate | Contact |\n|---|---|---|\n| Boreal Packaging |" in (
        converted.text
    )
    assert converted.metadata["title"] == "How the Tern sensor team ships firmware"


def test_html_in_a_declared_legacy_charset_is_decoded() -> None:
    page = '<meta charset="windows-1252"><h1>Café Tern</h1><p>Crème brûlée</p>'
    converted = convert(Path("page.htm"), page.encode("cp1252"))
    assert converted.text == "Café Tern\n\nCrème brûlée"
    assert converted.metadata["title"] == "Café Tern"


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("Intro line.\n\n# The Tern project #\n\nBody.", "The Tern project"),
        ("No heading at all.", "notes"),
    ],
)
def test_markdown_is_kept_as_written_with_its_title(text: str, title: str) -> None:
    converted = convert(Path("notes.md"), text.encode())
    assert converted.text == text
    assert converted.metadata == {"format": "markdown", "title": title}


def test_markdown_front_matter_becomes_metadata_not_text() -> None:
    text = (
        "---\ntitle: 'Tern notes'\nauthor: Mira Okafor\ndate: 2026-03-12\n"
        "tags: [sonar, field]\ndraft: false\nnested: {a: 1}\n---\n# Other\nBody."
    )
    converted = convert(Path("notes.md"), text.encode())
    assert converted.text == "# Other\nBody."
    assert converted.metadata == {
        "format": "markdown",
        "title": "Tern notes",
        "author": "Mira Okafor",
        "date": "2026-03-12",
        "tags": "sonar, field",
        "tag:sonar": "true",
        "tag:field": "true",
        "draft": "false",
    }


def test_markdown_front_matter_that_is_not_yaml_is_an_error_naming_the_line() -> None:
    with pytest.raises(ConversionError, match=r"front matter is not valid YAML \(line 3\)"):
        convert(Path("notes.md"), b"---\ntitle: Tern\nauthor: [Mira\n---\nBody.")


def test_folder_of_real_documents_reads_all_but_the_corrupt_one(tmp_path: Path) -> None:
    (tmp_path / "report.pdf").write_bytes(pdf_bytes(["Mira Okafor leads the Tern team."], "R"))
    (tmp_path / "notes.docx").write_bytes(docx_bytes("Notes", ["Sonar trials in Tromsø."]))
    (tmp_path / "page.html").write_bytes(PAGE.encode())
    (tmp_path / "broken.pdf").write_bytes(corrupt_pdf_bytes())
    documents, errors = read_all([tmp_path])
    assert sorted(d.doc_id for d in documents) == ["notes.docx", "page.html", "report.pdf"]
    assert [e.path.name for e in errors] == ["broken.pdf"]
    pdf = next(d for d in documents if d.doc_id == "report.pdf")
    assert pdf.content == "Mira Okafor leads the Tern team."
    assert pdf.metadata == {"format": "pdf", "title": "R", "pages": "1"}


def test_a_page_with_a_blank_title_is_named_by_its_first_heading() -> None:
    page = b"<html><head><title> </title></head><body><h1>Tern</h1><p>Text.</p></body></html>"
    assert convert(Path("p.html"), page).metadata["title"] == "Tern"
