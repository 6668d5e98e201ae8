"""Spans the rules take for names that are not names, whatever the model says.

A sentence whose terminator lacks the space after it ("born in 1850.After World War II he")
runs into the next sentence: the run of capitalized words then starts with the end of one
sentence. Such a span is a fragment, never a name.

A lone everyday word capitalized in a heading, a title or the rest of a split name ("Formed",
"Disbanded", "Away" of "Home and Away", "Cottage" of "Lincoln's Cottage") names nothing by
itself. Which words are everyday words is read from a table of how often English writes a
word in lowercase and capitalized (nlp_everyday.txt, derived from spaCy's lexeme
probabilities by scripts/gen_everyday_words.py): English writes "china" and "oslo" less often
than "China" and "Oslo", but "charge", "cabinet" and "disbanded" far more often than
"Charge", "Cabinet" and "Disbanded". The table is case-sensitive, which a dictionary of words
is not (WordNet lists "china" and "paris"), and it needs no corpus statistics, so the
decision is the chunk's own.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from collections.abc import Sequence, Set

from ragstream.indexer.stages.extract.nlp_lexicon import EPITHETS
from ragstream.indexer.stages.extract.nlp_tokens import NEXT_LOWERCASE_WORD

_RUN_ON = re.compile(r"[a-z0-9][.!?;][A-Z][a-z]")
"""A terminator between a lowercase letter or digit and a capitalized word; initials
("J.R.R. Tolkien") and versions ("S3.1") do not match."""

EVERYDAY_TABLE = "nlp_everyday.txt"
"""Capitalized word -> how much more probable its lowercase form is (natural log); only words
whose lowercase form is frequent and the more probable are listed."""
COMMONER = 2
"""A word is an everyday word when its lowercase form is at least this many times as probable
as its capitalized form. At 2, the capitalized form of a place or a brand wins ("Oslo",
"Intel", "Queens"), while words mostly capitalized at a sentence's start lose ("Charge",
"Arrival", "Women", "Cabinet"). A word only a little more frequent in lowercase is a name
as likely ("Queens" of "Queens and Brooklyn", "Labour", "Guinea")."""
_MARGIN = math.log(COMMONER)


def junk_name(name: str) -> bool:
    """True when `name` is a fragment of two sentences rather than a name."""
    return _RUN_ON.search(name) is not None


def everyday_word(word: str) -> bool:
    """True when `word`, capitalized, is a common lowercase word rather than a name: its
    lowercase form is at least COMMONER times as probable. A rare lowercase word is never
    one: capitalized it is as likely a name ("Tern", a sensor family)."""
    margin = _everyday().get(word)
    return margin is not None and margin >= _MARGIN


def mostly_lowercase(word: str) -> bool:
    """True when English writes `word`, capitalized, more often in lowercase, by any margin
    (a weaker test than `everyday_word`, for a word nothing else vouches for as a name)."""
    return _everyday().get(word, 0.0) > 0


@functools.cache
def _everyday() -> dict[str, float]:
    table = importlib.resources.files(__package__).joinpath(EVERYDAY_TABLE)
    margins = {}
    for line in table.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            word, margin = line.split("\t")
            margins[word] = float(margin)
    return margins


_CONNECTED_BEFORE = re.compile(r"([A-Z][\w.-]*)(?:['’]s|\s+(?:and|of|&|for))?\s+$")
"""A capitalized word just before, alone or with a connector or possessive ("Applied
|Physics", "Wildlife and |Parks", "Institute of |Physics", "Lincoln's |Cottage")."""
_NAME_AFTER = re.compile(r"\s+(?:(?:and|&)\s+(?:the\s+)?)?[A-Z]")
"""A capitalized word just after, or "and" and one ("|Reserve", "|and Federal Employees");
"of" and a name after are _OF_NAME_AFTER's, for any word."""
_OF_NAME_AFTER = re.compile(r"\s+of\s+(?:the\s+)?[A-Z]")
"""An "of" and a name just after: "Regent| of the County of Nassau", "Tomb| of Tu Duc"."""
_EPITHET_BEFORE = re.compile(r"([A-Z][\w.-]*)\s+the\s+$")
"""A name and "the" just before an epithet ("Bosonid Boso the |Elder")."""


def split_remnant(name: str, sentences: Sequence[str], not_names: Set[str]) -> bool:
    """True when `name` is one word that the chunk writes only inside longer names.

    Any word: the head of a name through "of" ("Regent" of "Regent of the County of Nassau",
    "Peerage" of "Peerage of the United Kingdom", where an "of the" split the name), or an
    epithet after a name and "the" ("Elder" of "Bosonid Boso the Elder", EPITHETS). An everyday
    word also: the rest of a name the name finder split ("Physics" of "Journal of Applied
    Physics"), at a connector ("Parks" of "Department of Wildlife and Parks") or at a possessive
    ("Cottage" of "Lincoln's Cottage"), or the head of one ("Cabinet" of "Cabinet of Ministers",
    "Transport" of "Transport and Federal Employees"). Such a word names nothing by itself. One
    the chunk also writes alone ("adopted the Euro") keeps its chance, as do words capitalized
    more often than not after a connector ("Germany" of "France and Germany", "Clark" of "Lewis
    and Clark", "Norway" of "Kingdom of Norway"). A word of `not_names` (lowercase) before it is
    no name: a stopword ("The", "In"), or a title that makes a name of a surname ("Mr Young",
    "President Lincoln"). Where the chunk writes the word after "the" and before "of", a
    common noun heading a name ("the Dominion of Ceylon", unlike "Matilda of Flanders"), its
    capital as a sentence's first word before a lowercase word is the sentence's and says
    nothing either way ("Dominion status was retained")."""
    if " " in name:
        return False
    everyday = everyday_word(name)
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    articled = re.compile(rf"(?<!\w)the {re.escape(name)} of ")
    common_head = any(articled.search(sentence) for sentence in sentences)
    seen = False
    for sentence in sentences:
        for match in pattern.finditer(sentence):
            opening = match.start() == 0 and NEXT_LOWERCASE_WORD.match(sentence, match.end())
            if opening and common_head:
                continue
            seen = True
            if _OF_NAME_AFTER.match(sentence, match.end()) or (
                name in EPITHETS and _after_name(sentence, match.start(), not_names)
            ):
                continue
            if not everyday:
                return False
            before = _CONNECTED_BEFORE.search(sentence, 0, match.start())
            inside = before is not None and before.group(1).lower() not in not_names
            if not inside and not _NAME_AFTER.match(sentence, match.end()):
                return False
    return seen


def _after_name(sentence: str, start: int, not_names: Set[str]) -> bool:
    """A name and "the" just before `start`, the name no word of `not_names` ("In the")."""
    before = _EPITHET_BEFORE.search(sentence, 0, start)
    return before is not None and before.group(1).lower() not in not_names
