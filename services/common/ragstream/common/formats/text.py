"""Bytes to text by a fixed rule, never a guess.

A byte-order mark names the encoding (UTF-8, UTF-16 or UTF-32, either byte order). Without
one, a NUL byte anywhere in the file means binary (the rule of git and grep, over the whole
file rather than its first 8 KiB), and the rest must be UTF-8. Legacy 8-bit encodings are
refused rather than guessed: on short files a detector's guess is often wrong, and a wrong
guess would index mojibake with no error at all.
"""

from __future__ import annotations

import codecs
import re

from ragstream.common.formats.errors import ConversionError

BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE, whose BOM it starts with
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
BINARY = "binary file (contains NUL bytes); text, Markdown, HTML, PDF and DOCX are indexed"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def bom_encoding(data: bytes) -> str | None:
    return next((name for bom, name in BOMS if data.startswith(bom)), None)


def decode_text(data: bytes) -> str:
    """The file's text by the rule above; ConversionError says why it is not text."""
    encoding = bom_encoding(data)
    if encoding is None and b"\x00" in data:
        raise ConversionError(BINARY)
    try:
        text = data.decode(encoding or "utf-8")
    except UnicodeDecodeError as exc:
        name = "UTF-8" if encoding is None else encoding.upper().removesuffix("-SIG")
        raise ConversionError(
            f"not valid {name} (byte {exc.start}): convert it to UTF-8 first"
        ) from None
    if "\x00" in text:
        raise ConversionError(BINARY)
    return text


def clean(text: str) -> str:
    """Text from a converter without control characters (kept: tab, newline, return)."""
    return _CONTROL.sub("", text)


def one_line(text: str, limit: int = 1024) -> str:
    """A metadata value: whitespace collapsed, control characters dropped, at most `limit`."""
    return " ".join(clean(text).split())[:limit]
