"""HTML to text: the page's main content by trafilatura, the page's full text when it finds
too little.

trafilatura is made for this job (boilerplate removal scored on web pages, maintained,
Apache-2.0): it drops navigation, cookie notices, sidebars, comments and footers, and writes
what is left as Markdown, headings and tables kept (a table row per line), so the chunker
and the citations see the page's structure. On the test page of tests/bench/bench_formats.py
it keeps the whole article and no boilerplate; readability-lxml 0.9 also finds the article
but returns HTML with tables flattened, which a second pass would have to rebuild.

When trafilatura finds less than `MIN_MAIN_CHARS` (a short page, a page of bare `<p>`s) the
standard library's lenient `html.parser` reads the whole page instead: script, style,
navigation, header, footer, sidebar and cookie-notice elements dropped; block elements end a
line, paragraphs a blank line; whitespace collapsed as a browser does it, except in `<pre>`.
The title is the page's (trafilatura's reading of `<title>` and its meta tags), else the
first `<h1>`; author, date and tags come from the page's meta tags where it has them.
"""

from __future__ import annotations

import logging
import re
from html.parser import HTMLParser

import trafilatura
from trafilatura.metadata import extract_metadata

from ragstream.common.formats.errors import ConversionError, Converted
from ragstream.common.formats.structure import markdown_table
from ragstream.common.formats.text import bom_encoding, clean, decode_text, one_line

# trafilatura and htmldate log what they could not find on a page; the page's text is
# reported once by the caller, and these lines would only interleave with that report.
for _name in ("trafilatura", "htmldate", "courlan"):
    logging.getLogger(_name).setLevel(logging.ERROR)

MIN_MAIN_CHARS = 250
"""Less main content than this (trafilatura's own minimum extraction) reads the whole page."""
HIDDEN = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object",
     "nav", "header", "footer", "aside", "form", "button", "dialog"}
)  # fmt: skip
"""Elements whose content is not the page's text (`<title>` is read on its own)."""
_BOILERPLATE = re.compile(r"cookie|consent|gdpr|banner|sidebar|newsletter|share|social", re.I)
"""An element whose id or class says this is boilerplate, as trafilatura's rules also judge."""
PARAGRAPHS = frozenset(
    {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dl",
     "section", "article", "main", "figure", "address", "details", "hr"}
)  # fmt: skip
LINES = frozenset(
    {"br", "div", "li", "tr", "dt", "dd", "caption", "figcaption", "summary", "option",
     "legend", "fieldset", "body", "html"}
)  # fmt: skip
CELLS = frozenset({"td", "th"})
"""A table is read as rows of cells and written as a Markdown table (structure.py)."""
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})
_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.heading: list[str] = []
        """The text of the first `<h1>`."""
        self._open: list[str] = []
        self._boilerplate: list[int] = []
        """Depths in `_open` of the elements marked as boilerplate by id or class."""
        self._rows: list[list[str]] | None = None
        """The cells of the table being read (a nested table's join its own)."""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._break(tag)
        if tag == "table" and self._rows is None:
            self._rows = []
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in CELLS and self._rows:
            self._rows[-1].append("")
        if tag not in VOID:
            marks = " ".join(value or "" for name, value in attrs if name in ("id", "class"))
            if _BOILERPLATE.search(marks):
                self._boilerplate.append(len(self._open))
            self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:  # closes it and whatever was left open inside it
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]
            self._boilerplate = [depth for depth in self._boilerplate if depth < len(self._open)]
            if tag == "h1" and self.heading:
                self.heading.append("\n")  # ends the first heading's text
            if tag == "table" and "table" not in self._open and self._rows is not None:
                self.parts.append(markdown_table([row for row in self._rows if row]))
                self._rows = None
        self._break(tag)

    def handle_data(self, data: str) -> None:
        if HIDDEN.intersection(self._open) or self._boilerplate:
            return
        if self._rows is not None:
            if self._rows and self._rows[-1]:
                self._rows[-1][-1] += data
        else:
            self.parts.append(data if "pre" in self._open else re.sub(r"\s+", " ", data))
        if "h1" in self._open and "\n" not in self.heading:
            self.heading.append(data)

    def _break(self, tag: str) -> None:
        """A line break (or a blank line) at a block's edge; adjacent edges share one."""
        lines = 2 if tag in PARAGRAPHS else 1 if tag in LINES else 0
        if not lines or self._rows is not None:
            return
        while self.parts and not self.parts[-1].strip():
            lines = max(lines, self.parts.pop().count("\n"))
        self.parts.append("\n" * lines)


def html_encoding(data: bytes) -> str | None:
    """The charset a `<meta>` in the first 4 KiB declares, if no byte-order mark names one."""
    found = _CHARSET.search(data[:4096])
    return found.group(1).decode("ascii") if found and bom_encoding(data) is None else None


def _markup(data: bytes) -> str:
    declared = html_encoding(data)
    if declared and declared.lower().replace("_", "-") not in ("utf-8", "utf8"):
        try:
            return data.decode(declared)
        except (LookupError, UnicodeDecodeError) as exc:
            raise ConversionError(f"HTML not readable as its declared {declared}: {exc}") from None
    return decode_text(data)


def html_document(data: bytes) -> Converted:
    """The page's main content (or its whole text) and what its meta tags say of it."""
    markup = _markup(data)
    main = trafilatura.extract(
        markup,
        output_format="markdown",
        include_tables=True,
        include_formatting=True,
        include_comments=False,
        include_links=False,
        include_images=False,
        fast=True,  # trafilatura's own whole-page fallbacks keep boilerplate; ours drops it
    )
    found = extract_metadata(markup, extensive=False)
    text = tidy(main) if main and len(main.strip()) >= MIN_MAIN_CHARS else ""
    heading = ""
    if not text or not one_line(found.title or ""):
        parser = _Text()
        parser.feed(markup)
        parser.close()
        text = text or tidy("".join(parser.parts))
        heading = one_line("".join(parser.heading))
    metadata = {
        "title": one_line(found.title or "") or heading,
        "author": one_line(found.author or ""),
        "date": one_line(found.date or ""),
        "tags": one_line(", ".join([*(found.categories or []), *(found.tags or [])])),
    }
    return Converted(text, {key: value for key, value in metadata.items() if value})


def tidy(text: str) -> str:
    """Lines without trailing blanks, at most one blank line in a row, none at either end."""
    # Collapsed whitespace leaves at most one space at a line's start; <pre> keeps its indent.
    lines = [
        re.sub(r"^ (?=\S)", "", line.rstrip())
        for line in clean(text).replace("\r\n", "\n").split("\n")
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
