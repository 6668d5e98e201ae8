"""nGQL literals: the only way values enter the graph store's statements.

`quote` is the one escaping function (tested with arbitrary Unicode against a lexer that
follows graphd's); `number` writes doubles; `vid` makes the fixed-length VIDs; `identifier`
admits names (the space) that are written bare.
"""

from __future__ import annotations

import hashlib
import math
import re
from decimal import Decimal

# The escapes every NebulaGraph 3.x lexer reads the same way. Not used: octal escapes
# (graphd's --disable_octal_escape_char turns them off, and "\0" followed by a digit is a
# syntax error) and \uXXXX (only recent lexers know it). Every other character, control
# characters included, is allowed raw inside a double-quoted literal, except NUL: the lexer
# copies raw runs with strncpy, which stops at a NUL, while a backslash followed by any byte
# (NUL included) stands for that byte.
_ESCAPES = str.maketrans(
    {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\x00": "\\\x00"}
)


def quote(text: str) -> str:
    """The nGQL double-quoted string literal whose value is exactly `text`."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"text contains a lone surrogate at {exc.start} and cannot be sent as UTF-8"
        ) from None
    return '"' + text.translate(_ESCAPES) + '"'


def number(value: float) -> str:
    """A double literal in positional notation (older lexers have no exponent form)."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"an edge weight must be finite, got {value}")
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else text + ".0"


def identifier(name: str) -> str:
    """`name` if it can stand bare in a statement (a space name), else ValueError."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,127}", name):
        raise ValueError(f"{name!r} is not a valid NebulaGraph name (letters, digits, _)")
    return name


def vid(workspace: str, key: str) -> str:
    """The VID of an entity: 32 hex digits of a hash of (workspace, key).

    The workspace is length-prefixed, so no (workspace, key) pair can collide with another
    by moving characters between the two."""
    space = workspace.encode("utf-8")
    digest = hashlib.blake2b(digest_size=16)
    digest.update(len(space).to_bytes(8, "big"))
    digest.update(space)
    digest.update(key.encode("utf-8"))
    return digest.hexdigest()
