"""HTML to text with the standard library's parser: the words a browser shows, no tags.

`html.parser` is lenient (unclosed and misnested tags, stray `<`), resolves character
references, and needs no dependency. Script, style and other non-content elements are
dropped; block elements end a line and paragraphs end with a blank line, so the chunker
sees the page's structure; whitespace inside a block collapses as a browser does it,
except in `<pre>`. The title is `<title>`, else the first `<h1>`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from ragstream.cli.formats.errors import ConversionError
from ragstream.cli.formats.text import bom_encoding, clean, decode_text, one_line

HIDDEN = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "head", "iframe", "object"}
)
"""Elements whose content is not text a reader sees (`<title>` is read on its own)."""
PARAGRAPHS = frozenset(
    {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol", "dl",
     "section", "article", "header", "footer", "aside", "main", "nav", "figure", "form",
     "address", "details", "hr"}
)  # fmt: skip
LINES = frozenset(
    {"br", "div", "li", "tr", "dt", "dd", "caption", "figcaption", "summary", "option",
     "legend", "fieldset", "body", "html"}
)  # fmt: skip
CELLS = frozenset({"td", "th"})
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})
_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]+)", re.IGNORECASE)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self.heading: list[str] = []
        """The text of the first `<h1>`."""
        self._open: list[str] = []
        self._cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._break(tag)
        if tag in CELLS:
            self.parts.append(" | " if self._cells else "")
            self._cells += 1
        if tag not in VOID:
            self._open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._open:  # closes it and whatever was left open inside it
            del self._open[len(self._open) - 1 - self._open[::-1].index(tag) :]
            if tag == "h1" and self.heading:
                self.heading.append("\n")  # ends the first heading's text
        self._break(tag)

    def handle_data(self, data: str) -> None:
        if "title" in self._open:
            self.title.append(data)
        elif not HIDDEN.intersection(self._open):
            self.parts.append(data if "pre" in self._open else re.sub(r"\s+", " ", data))
            if "h1" in self._open and "\n" not in self.heading:
                self.heading.append(data)

    def _break(self, tag: str) -> None:
        """A line break (or a blank line) at a block's edge; adjacent edges share one."""
        lines = 2 if tag in PARAGRAPHS else 1 if tag in LINES else 0
        if not lines:
            return
        self._cells = 0
        while self.parts and not self.parts[-1].strip():
            lines = max(lines, self.parts.pop().count("\n"))
        self.parts.append("\n" * lines)


def html_encoding(data: bytes) -> str | None:
    """The charset a `<meta>` in the first 4 KiB declares, if no byte-order mark names one."""
    found = _CHARSET.search(data[:4096])
    return found.group(1).decode("ascii") if found and bom_encoding(data) is None else None


def html_text(data: bytes) -> tuple[str, str]:
    """(text, title) of an HTML page; the title is "" when the page names none."""
    declared = html_encoding(data)
    if declared and declared.lower().replace("_", "-") not in ("utf-8", "utf8"):
        try:
            markup = data.decode(declared)
        except (LookupError, UnicodeDecodeError) as exc:
            raise ConversionError(f"HTML not readable as its declared {declared}: {exc}") from None
    else:
        markup = decode_text(data)
    parser = _Text()
    parser.feed(markup)
    parser.close()
    title = one_line("".join(parser.title)) or one_line("".join(parser.heading))
    return tidy("".join(parser.parts)), title


def tidy(text: str) -> str:
    """Lines without trailing blanks, at most one blank line in a row, none at either end."""
    # Collapsed whitespace leaves at most one space at a line's start; <pre> keeps its indent.
    lines = [
        re.sub(r"^ (?=\S)", "", line.rstrip())
        for line in clean(text).replace("\r\n", "\n").split("\n")
    ]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
