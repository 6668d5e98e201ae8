"""Real documents for ingest tests, made on the spot: PDF by hand, DOCX with python-docx,
and a blog-style HTML page with the boilerplate pages carry around their article.

`pdf_bytes` writes a minimal but complete PDF 1.4 file (catalog, page tree, one Helvetica
text line per page, document information, cross-reference table), which any reader opens.
"""

from __future__ import annotations

import io
from pathlib import Path

import docx


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[str], title: str = "") -> bytes:
    """A PDF with one line of text per page and, if given, a title in its information."""
    first_page = 5
    kids = " ".join(f"{first_page + 2 * i} 0 R" for i in range(len(pages)))
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        f"<< /Title ({_escape(title)}) /Producer (ragstream tests) >>",
    ]
    for index, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({_escape(text)}) Tj ET"
        objects.append(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {first_page + 2 * index + 1} 0 R >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1"))
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    trailer = f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R /Info 4 0 R >>\n"
    out.write(f"{trailer}startxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def corrupt_pdf_bytes() -> bytes:
    """Starts like a PDF, then nothing a reader can use: no objects, no trailer."""
    return b"%PDF-1.7\n" + bytes(range(256)) * 8


def docx_bytes(title: str, paragraphs: list[str], table: list[list[str]] | None = None) -> bytes:
    document = docx.Document()
    document.core_properties.title = title
    document.add_heading(title, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for row, values in zip(grid.rows, table, strict=True):
            for cell, value in zip(row.cells, values, strict=True):
                cell.text = value
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


BLOG_PAGE = (Path(__file__).parent / "blog.html").read_text(encoding="utf-8")
"""An article with a cookie banner, navigation, a "Popular posts" sidebar and a footer."""
BLOG_BOILERPLATE = (
    "cookies", "Accept all", "Privacy settings", "Home", "Products", "Careers", "About us",
    "Popular posts", "winter deployments", "LoRa", "Petrel team", "Newsletter", "Subscribe",
    "All rights reserved", "Facebook", "Twitter", "Instagram", "Terms", "Contact us",
    "tracking", "analytics", "font-family",
)  # fmt: skip
"""Text of the page that is not its article: none of it may reach a chunk."""
BLOG_ARTICLE = (
    "The Tern sensor team is led by Mira Okafor",
    "a release every two weeks",
    "hardware-in-the-loop rig",
    "rejected before it reaches the field units",
    "Tomasz Lindqvist",
    "| Kestrel Optics | 97% | Arvid Holm |",
    "the most reliable supplier for two years running",
)
"""Pieces of the article: all of them must."""

PAGES = [
    "Mira Okafor leads the Tern sensor team in Tromso.",
    "Kestrel Optics delivered 97 percent of lens orders on time.",
    "The Skua drone completed its sea trials in Bergen in May.",
]
"""The pages of a PDF whose pages hold different facts."""
PAGE_QUESTIONS = {
    "Who leads the Tern sensor team?": 1,
    "Which supplier delivered lens orders on time?": 2,
    "Where did the Skua drone complete its sea trials?": 3,
}
"""A question on each page of PAGES, and that page's number."""
