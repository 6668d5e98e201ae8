"""Finding a name inside text as a whole word, for Latin and Chinese names alike."""

from __future__ import annotations

import re

_LATIN_EDGE = re.compile(r"[A-Za-z0-9]")


def name_pattern(name: str, after: str = "") -> str:
    """A regex for `name` that does not match inside a longer Latin word: an edge that is a
    Latin letter or digit must not touch another ("US" is not in "husband"); Chinese text has
    no spaces, so a Han edge needs nothing. `after` is an extra lookahead for a Latin end."""
    pattern = re.escape(name)
    if _LATIN_EDGE.match(name[0]):
        pattern = r"(?<![A-Za-z0-9])" + pattern
    if _LATIN_EDGE.match(name[-1]):
        pattern += r"(?![A-Za-z0-9])" + after
    return pattern
