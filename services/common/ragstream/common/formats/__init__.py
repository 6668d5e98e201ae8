"""Files to text: each format by its converter, chosen by the file's extension.

| extension | converter | keeps | metadata |
| --- | --- | --- | --- |
| .pdf | pypdf | pages (a page break between pages) | format, title, pages |
| .docx | python-docx | headings, tables, page breaks the file records | format, title, pages (when Word recorded them) |
| .html .htm .xhtml | trafilatura (main content), else `html.parser` (whole page less boilerplate) | headings, tables, lists | format, title, author, date, tags (from meta tags) |
| .md .markdown | kept as written, front matter taken out | everything | format, the front matter's fields (title, author, date, tags, ...) |
| anything else | text by the rule of `text.py` (UTF-8/16/32, never binary) | as written | format, title |

Every converter writes structure in one shape (structure.py): Markdown headings and tables,
and a form feed between pages, from which chunks get their section and page numbers. The
title is the document's own where it names one, else the file name without its extension,
so every document has one. A file a converter cannot read raises ConversionError with the
reason.
"""  # noqa: E501 - a table reads better unwrapped

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ragstream.common.formats.errors import ConversionError, Converted
from ragstream.common.formats.markdown import markdown_document
from ragstream.common.formats.text import decode_text, one_line

__all__ = ["CONVERTED_SUFFIXES", "ConversionError", "Converted", "convert"]


def _pdf(data: bytes) -> Converted:
    from ragstream.common.formats.pdf import pdf_document  # pypdf loads only when a PDF comes

    return pdf_document(data)


def _docx(data: bytes) -> Converted:
    from ragstream.common.formats.docx import docx_document  # python-docx and lxml likewise

    return docx_document(data)


def _html(data: bytes) -> Converted:
    from ragstream.common.formats.html import html_document  # trafilatura likewise

    return html_document(data)


def _text(data: bytes) -> Converted:
    return Converted(decode_text(data))


Converter = Callable[[bytes], Converted]
CONVERTERS: dict[str, tuple[str, Converter]] = {
    ".pdf": ("pdf", _pdf),
    ".docx": ("docx", _docx),
    ".html": ("html", _html),
    ".htm": ("html", _html),
    ".xhtml": ("html", _html),
    ".md": ("markdown", markdown_document),
    ".markdown": ("markdown", markdown_document),
}
CONVERTED_SUFFIXES = frozenset(s for s, (name, _) in CONVERTERS.items() if name in ("pdf", "docx"))
"""Formats whose files hold far more bytes than text, so they get a larger size limit."""


def convert(path: Path, data: bytes) -> Converted:
    """The file's text and metadata; ConversionError when it has no usable text."""
    name, converter = CONVERTERS.get(path.suffix.lower(), ("text", _text))
    converted = converter(data)
    if not converted.text.replace("\f", "").strip():
        raise ConversionError("empty file: nothing to index")
    metadata = {**converted.metadata, "format": name}
    metadata["title"] = metadata.get("title") or one_line(path.stem)
    return Converted(converted.text, metadata)
