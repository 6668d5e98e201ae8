"""Spans the rules take for names that are not names, whatever the model says.

A sentence whose terminator lacks the space after it ("born in 1850.After World War II he")
runs into the next sentence: the run of capitalized words then starts with the end of one
sentence. Such a span is a fragment, never a name.
"""

from __future__ import annotations

import re

_RUN_ON = re.compile(r"[a-z0-9][.!?;][A-Z][a-z]")
"""A terminator between a lowercase letter or digit and a capitalized word; initials
("J.R.R. Tolkien") and versions ("S3.1") do not match."""


def junk_name(name: str) -> bool:
    """True when `name` is a fragment of two sentences rather than a name."""
    return _RUN_ON.search(name) is not None
