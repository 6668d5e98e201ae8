"""Converter benchmark: pages per second for each format, and how much of a web page's
boilerplate the HTML converter keeps, on a folder of files made here (no download).

The folder: 40 PDFs of 10 pages, 40 DOCX files of 10 pages (headings, paragraphs, a table,
page breaks), 100 blog-style HTML pages (tests/support/blog.html with its article text
varied: cookie banner, navigation, "Popular posts" sidebar and footer around it), 100
Markdown files with front matter, 100 Chinese text files. A page is a file's page for PDF
and DOCX, a file for HTML, and 3,000 characters of text for Markdown and text files.

For HTML it counts, over every page, the boilerplate phrases (BLOG_BOILERPLATE) and article
phrases (BLOG_ARTICLE) the text holds, for the converter (trafilatura's main content) and for
the page's whole text as the standard library's parser reads it (the converter before;
boilerplate elements kept). Targets: no boilerplate and the whole article kept.

    .venv/bin/python -m tests.bench.bench_formats

Exits with status 1 when a target is missed.
"""

from __future__ import annotations

import io
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docx
import lxml.html

from ragstream.common.formats import convert
from ragstream.common.formats.html import _Text, tidy
from tests.support.documents import BLOG_ARTICLE, BLOG_BOILERPLATE, BLOG_PAGE, pdf_bytes

CHARS_PER_PAGE = 3000
WORDS = [
    "sensor", "buoy", "mooring", "telemetry", "firmware", "release", "drift", "oxygen",
    "salinity", "harbour", "drone", "supplier", "seal", "pressure", "trial", "survey", "fjord",
    "vessel", "current", "depth", "calibration",
]  # fmt: skip


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 16))).capitalize() + "."


def docx_file(rng: random.Random, pages: int) -> bytes:
    document = docx.Document()
    for page in range(pages):
        if page:
            document.add_page_break()  # type: ignore[no-untyped-call]
        document.add_heading(f"Section {page + 1}", level=2)
        for _ in range(4):
            document.add_paragraph(" ".join(sentence(rng) for _ in range(5)))
        grid = document.add_table(rows=3, cols=3)
        for row in grid.rows:
            for cell in row.cells:
                cell.text = rng.choice(WORDS)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def html_file(rng: random.Random) -> bytes:
    article = " ".join(sentence(rng) for _ in range(4))
    return BLOG_PAGE.replace(
        "<h2>Release cadence</h2>", f"<p>{article}</p><h2>Release cadence</h2>"
    ).encode()


def markdown_file(rng: random.Random) -> bytes:
    body = "\n\n".join(" ".join(sentence(rng) for _ in range(5)) for _ in range(8))
    front = f"---\ntitle: Note {rng.randint(1, 999)}\nauthor: Ines Duarte\ntags: [a, b]\n---\n"
    return f"{front}# Notes\n\n{body}\n".encode()


def chinese_file(rng: random.Random) -> bytes:
    phrases = ["传感器在舟山海试中进水。", "团队改进了密封圈。", "压力测试通过了两百次循环。"]
    return "".join(rng.choice(phrases) for _ in range(300)).encode()


Made = dict[str, list[tuple[Path, float]]]
"""The files made of each format, with their page counts."""


@dataclass
class Figures:
    files: int = 0
    pages: float = 0.0
    seconds: float = 0.0


def make_folder(folder: Path) -> Made:
    """The files of each format with their page count."""
    rng = random.Random(7)
    made: dict[str, list[tuple[Path, float]]] = {}

    def add(kind: str, name: str, data: bytes, pages: float) -> None:
        path = folder / name
        path.write_bytes(data)
        made.setdefault(kind, []).append((path, pages))

    for n in range(40):
        add("pdf", f"r{n}.pdf", pdf_bytes([sentence(rng) * 3 for _ in range(10)]), 10)
        add("docx", f"d{n}.docx", docx_file(rng, 10), 10)
    for n in range(100):
        add("html", f"p{n}.html", html_file(rng), 1)
        for kind, suffix, data in (
            ("markdown", "md", markdown_file(rng)),
            ("text", "txt", chinese_file(rng)),
        ):
            add(kind, f"{kind}{n}.{suffix}", data, len(data.decode()) / CHARS_PER_PAGE)
    return made


def fallback(data: bytes) -> str:
    """What the converter reads when trafilatura finds too little: the whole page less its
    boilerplate elements."""
    parser = _Text()
    parser.feed(data.decode())
    parser.close()
    return tidy("".join(parser.parts))


def whole_page(data: bytes) -> str:
    """Every word a browser shows (what a converter without boilerplate removal indexes)."""
    tree = lxml.html.fromstring(data)
    for hidden in tree.xpath("//script | //style | //head"):
        hidden.drop_tree()
    return str(tree.text_content())


def phrases_kept(texts: list[str], phrases: tuple[str, ...]) -> float:
    found = sum(phrase in text for text in texts for phrase in phrases)
    return found / (len(texts) * len(phrases))


def measure(
    made: dict[str, list[tuple[Path, float]]], read: Callable[[Path], str]
) -> dict[str, Figures]:
    figures = {}
    for kind, files in made.items():
        figure = Figures()
        start = time.perf_counter()
        for path, pages in files:
            read(path)
            figure.files += 1
            figure.pages += pages
        figure.seconds = time.perf_counter() - start
        figures[kind] = figure
    return figures


def run(folder: Path) -> bool:
    made = make_folder(folder)
    figures = measure(made, lambda path: convert(path, path.read_bytes()).text)
    print(f"{'format':10} {'files':>6} {'pages':>7} {'pages/s':>9}")
    for kind, f in figures.items():
        print(f"{kind:10} {f.files:6d} {f.pages:7.0f} {f.pages / f.seconds:9.1f}")
    pages = [path.read_bytes() for path, _ in made["html"]]
    converted = [convert(Path("p.html"), data).text for data in pages]
    kept, article = phrases_kept(converted, BLOG_BOILERPLATE), phrases_kept(converted, BLOG_ARTICLE)
    print(f"HTML boilerplate phrases kept: {kept:.0%}, article phrases kept: {article:.0%}")
    for name, read in (("fallback parser", fallback), ("whole page", whole_page)):
        texts = [read(data) for data in pages]
        print(f"  {name}: boilerplate {phrases_kept(texts, BLOG_BOILERPLATE):.0%}, "
              f"article {phrases_kept(texts, BLOG_ARTICLE):.0%}")  # fmt: skip
    return kept == 0 and article == 1


def test_converters(tmp_path: Path) -> None:
    assert run(tmp_path)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        sys.exit(0 if run(Path(tmp)) else 1)
