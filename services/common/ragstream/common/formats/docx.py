"""DOCX to text with python-docx, the maintained reader and writer of the format.

Paragraphs and tables in document order; a heading (Title, Heading 1-6) becomes a Markdown
heading of its level, so it is the section of the chunks under it; a table becomes a
Markdown table, one row per line. The format has no pages, but a file records the page
breaks it was saved with (explicit ones, and those Word laid out last): each becomes a page
break before its paragraph, so chunks get page numbers where the file knows them. The title
is the document's core property, else its first Title or Heading 1 paragraph; Word records
the page count it last laid out in docProps/app.xml, reported when present.
"""

from __future__ import annotations

import io
import re
import zipfile
from xml.etree import ElementTree

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from ragstream.common.formats.errors import ConversionError, Converted
from ragstream.common.formats.structure import PAGE_BREAK, markdown_heading, markdown_table
from ragstream.common.formats.text import clean, one_line

APP_PAGES = "{http://schemas.openxmlformats.org/officeDocument/2006/extended-properties}Pages"
TITLE_STYLES = ("Title", "Heading 1")
_HEADING_STYLE = re.compile(r"^(?:Heading (\d)|Title)$")
_PAGE_BREAKS = './/w:br[@w:type="page"] | .//w:lastRenderedPageBreak'


def docx_document(data: bytes) -> Converted:
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ConversionError("not a DOCX file (not a zip archive)")
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - a damaged file fails anywhere inside the parser
        raise ConversionError(f"damaged DOCX: {one_line(str(exc), 200)}") from None
    blocks: list[str] = []
    headings: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            blocks.append(clean(markdown_table(_cells(item))))
            continue
        if item._p.xpath(_PAGE_BREAKS) and blocks:  # python-docx has no API for it
            blocks.append("\f")
        blocks.append(clean(_paragraph(item, headings)).strip())
    text = "\n\n".join(block for block in blocks if block)
    text = re.sub(r"(?:\n\n\f)+\n\n", PAGE_BREAK, text).strip("\f\n")
    if not text.replace("\f", "").strip():
        raise ConversionError("DOCX has no text")
    title = document.core_properties.title or (headings[0] if headings else "")
    metadata = {"title": one_line(title)}
    if (pages := _pages(data)) is not None:
        metadata["pages"] = str(pages)
    return Converted(text, metadata)


def _paragraph(paragraph: Paragraph, headings: list[str]) -> str:
    style = paragraph.style.name if paragraph.style is not None else ""
    found = _HEADING_STYLE.match(style or "")
    if not found or not paragraph.text.strip():
        return paragraph.text
    if style in TITLE_STYLES:
        headings.append(paragraph.text)
    return markdown_heading(int(found.group(1) or 1), paragraph.text)


def _cells(table: Table) -> list[list[str]]:
    return [[cell.text.strip() for cell in row.cells] for row in table.rows]


def _pages(data: bytes) -> int | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            pages = ElementTree.fromstring(archive.read("docProps/app.xml")).find(APP_PAGES)
    except (KeyError, zipfile.BadZipFile, ElementTree.ParseError):
        return None
    text = pages.text if pages is not None else None
    return int(text) if text and text.strip().isdigit() else None
