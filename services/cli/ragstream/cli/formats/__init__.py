"""Files to text: each format by its converter, chosen by the file's extension.

| extension | converter | metadata |
| --- | --- | --- |
| .pdf | pypdf | format, title, pages |
| .docx | python-docx | format, title, pages (when Word recorded them) |
| .html .htm .xhtml | the standard library's html.parser | format, title |
| .md .markdown | kept as written | format, title |
| anything else | text by the rule of `text.py` (UTF-8/16/32, never binary) | format, title |

The title is the document's own where it names one, else the file name without its
extension, so every document has one. A file a converter cannot read raises
ConversionError with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ragstream.cli.formats.errors import ConversionError
from ragstream.cli.formats.html import html_text
from ragstream.cli.formats.markdown import markdown_title
from ragstream.cli.formats.text import decode_text, one_line

__all__ = ["CONVERTED_SUFFIXES", "ConversionError", "Converted", "convert"]


@dataclass(frozen=True, slots=True)
class Converted:
    text: str
    metadata: dict[str, str] = field(default_factory=dict)


def _pdf(data: bytes) -> tuple[str, str, int | None]:
    from ragstream.cli.formats.pdf import pdf_text  # pypdf loads only when a PDF comes

    return pdf_text(data)


def _docx(data: bytes) -> tuple[str, str, int | None]:
    from ragstream.cli.formats.docx import docx_text  # python-docx and lxml likewise

    return docx_text(data)


def _html(data: bytes) -> tuple[str, str, int | None]:
    return (*html_text(data), None)


def _markdown(data: bytes) -> tuple[str, str, int | None]:
    text = decode_text(data)
    return text, markdown_title(text), None


def _text(data: bytes) -> tuple[str, str, int | None]:
    return decode_text(data), "", None


Converter = Callable[[bytes], tuple[str, str, int | None]]
"""(text, title or "", page count or None) of a file's bytes."""
CONVERTERS: dict[str, tuple[str, Converter]] = {
    ".pdf": ("pdf", _pdf),
    ".docx": ("docx", _docx),
    ".html": ("html", _html),
    ".htm": ("html", _html),
    ".xhtml": ("html", _html),
    ".md": ("markdown", _markdown),
    ".markdown": ("markdown", _markdown),
}
CONVERTED_SUFFIXES = frozenset(s for s, (name, _) in CONVERTERS.items() if name in ("pdf", "docx"))
"""Formats whose files hold far more bytes than text, so they get a larger size limit."""


def convert(path: Path, data: bytes) -> Converted:
    """The file's text and metadata; ConversionError when it has no usable text."""
    name, converter = CONVERTERS.get(path.suffix.lower(), ("text", _text))
    text, title, pages = converter(data)
    if not text.strip():
        raise ConversionError("empty file: nothing to index")
    metadata = {"format": name, "title": title or one_line(path.stem)}
    if pages is not None:
        metadata["pages"] = str(pages)
    return Converted(text, metadata)
