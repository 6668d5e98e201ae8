"""The lexer of the nGQL parser (`tests.support.ngql`) used by the NebulaGraph test double.

It follows graphd's flex scanner (src/parser/scanner.lex) byte by byte for the tokens
it knows, and is stricter where graphd versions disagree: octal escapes (switched off by
--disable_octal_escape_char), \\uXXXX / \\xXXXX escapes (recent versions only), upper-case
\\N \\T \\R \\B \\F (case-insensitive only in recent versions), a raw NUL inside a literal
(graphd copies raw runs with strncpy, which stops at NUL) and exponent floats are errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


class NgqlSyntaxError(ValueError):
    """The text is not a statement the double understands (graphd: E_SYNTAX_ERROR)."""


@dataclass(frozen=True)
class Token:
    kind: str  # LABEL, STRING, INT, DOUBLE, VAR, PUNCT
    value: object
    at: int


_SIMPLE_ESCAPES = {ord("n"): 0x0A, ord("t"): 0x09, ord("r"): 0x0D, ord("b"): 0x08, ord("f"): 0x0C}
_NUMBER = re.compile(rb"[0-9]+\.[0-9]*|[0-9]*\.[0-9]+|[0-9]+")
_LABEL = re.compile(rb"[a-zA-Z][_a-zA-Z0-9]*")
_PUNCT = (b"->", b"==", *(bytes([c]) for c in b"()[],:;@|.*=-"))


def _string(data: bytes, start: int) -> tuple[str, int]:
    """The literal opening at data[start] (a quote): (value, index after the closing quote)."""
    quote, out, i = data[start], bytearray(), start + 1
    while i < len(data):
        byte = data[i]
        if byte == quote:
            try:
                return out.decode("utf-8"), i + 1
            except UnicodeDecodeError as exc:
                raise NgqlSyntaxError(f"string literal at {start} is not UTF-8") from exc
        if byte == 0x0A:
            raise NgqlSyntaxError(f"raw newline inside the string literal at {start}")
        if byte == 0x00:
            raise NgqlSyntaxError(f"raw NUL inside the string literal at {start}")
        if byte != 0x5C:
            out.append(byte)
            i += 1
            continue
        if i + 1 >= len(data):
            break
        nxt = data[i + 1]
        if 0x30 <= nxt <= 0x39:
            raise NgqlSyntaxError(f"octal/decimal escape at {i}: its meaning varies by version")
        if nxt in b"uUxX" and re.fullmatch(rb"[0-9a-fA-F]{4}", data[i + 2 : i + 6]):
            raise NgqlSyntaxError(f"\\u/\\x escape at {i}: only recent versions read it")
        if nxt in b"NTRBF":
            raise NgqlSyntaxError(f"upper-case escape at {i}: its meaning varies by version")
        out.append(_SIMPLE_ESCAPES.get(nxt, nxt))
        i += 2
    raise NgqlSyntaxError(f"unterminated string literal at {start}")


def _skip(data: bytes, i: int) -> int:
    """Index of the next token: skips blanks and comments (#, //, /* */) as graphd does."""
    while i < len(data):
        if data[i] in b" \t\r\n":
            i += 1
        elif data[i : i + 1] == b"#" or data[i : i + 2] == b"//":
            end = data.find(b"\n", i)
            i = len(data) if end < 0 else end
        elif data[i : i + 2] == b"/*":
            end = data.find(b"*/", i + 2)
            if end < 0:
                raise NgqlSyntaxError(f"unterminated comment at {i}")
            i = end + 2
        else:
            break
    return i


def tokenize(text: str) -> list[Token]:
    data, tokens, i = text.encode("utf-8"), [], 0
    while (i := _skip(data, i)) < len(data):
        byte = data[i]
        if byte in b"\"'":
            value, end = _string(data, i)
            tokens.append(Token("STRING", value, i))
        elif data[i : i + 2] in (b"$^", b"$$", b"$-"):
            tokens.append(Token("VAR", chr(data[i + 1]), i))
            end = i + 2
        elif (number := _NUMBER.match(data, i)) and number.group() != b".":
            end = number.end()
            if data[end : end + 1] in (b"e", b"E"):
                raise NgqlSyntaxError(f"exponent in the number at {i}: older lexers reject it")
            literal = number.group().decode()
            if "." in literal:
                tokens.append(Token("DOUBLE", float(literal), i))
            else:
                tokens.append(Token("INT", int(literal), i))
        elif label := _LABEL.match(data, i):
            end = label.end()
            tokens.append(Token("LABEL", label.group().decode(), i))
        elif punct := next((p for p in _PUNCT if data.startswith(p, i)), None):
            end = i + len(punct)
            tokens.append(Token("PUNCT", punct.decode(), i))
        else:
            raise NgqlSyntaxError(f"unexpected character {data[i : i + 1]!r} at {i}")
        i = end
    return tokens
