"""DOCX to text with python-docx, the maintained reader and writer of the format.

Paragraphs and tables in document order; a table row becomes one line with its cells
joined by " | ". The title is the document's core property, else its first Title or
Heading 1 paragraph. Word records the page count it last laid out in docProps/app.xml;
it is reported when present (the format itself has no pages).
"""

from __future__ import annotations

import io
import zipfile
from xml.etree import ElementTree

import docx
from docx.table import Table
from docx.text.paragraph import Paragraph

from ragstream.cli.formats.errors import ConversionError
from ragstream.cli.formats.text import clean, one_line

APP_PAGES = "{http://schemas.openxmlformats.org/officeDocument/2006/extended-properties}Pages"
TITLE_STYLES = ("Title", "Heading 1")


def docx_text(data: bytes) -> tuple[str, str, int | None]:
    """(text, title, page count or None)."""
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ConversionError("not a DOCX file (not a zip archive)")
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - a damaged file fails anywhere inside the parser
        raise ConversionError(f"damaged DOCX: {one_line(str(exc), 200)}") from None
    blocks: list[str] = []
    headings: list[str] = []
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            blocks.append(item.text)
            if item.style is not None and item.style.name in TITLE_STYLES and item.text.strip():
                headings.append(item.text)
        else:
            blocks.append("\n".join(_rows(item)))
    text = "\n\n".join(clean(block).strip() for block in blocks if block.strip())
    if not text:
        raise ConversionError("DOCX has no text")
    title = document.core_properties.title or (headings[0] if headings else "")
    return text, one_line(title), _pages(data)


def _rows(table: Table) -> list[str]:
    return [" | ".join(cell.text.strip() for cell in row.cells) for row in table.rows]


def _pages(data: bytes) -> int | None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            pages = ElementTree.fromstring(archive.read("docProps/app.xml")).find(APP_PAGES)
    except (KeyError, zipfile.BadZipFile, ElementTree.ParseError):
        return None
    text = pages.text if pages is not None else None
    return int(text) if text and text.strip().isdigit() else None
