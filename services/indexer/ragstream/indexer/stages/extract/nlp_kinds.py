"""Capitalized words that name a role or a kind of people or things, not one thing.

An office or a rank held ("served as Regent"), an occupation ("a British Cinematographer"),
a title's plural ("two Lieutenants"), a counted plural ("the 1923 and 1929 Exhibitions"),
a record's sales award ("certified Platinum") and a common word qualifying an occupation
("Opera singer") are capitalized in English text as names are, and name nothing alone. Pure
functions of the words and the text around them.
"""

from __future__ import annotations

import re

from ragstream.common.text.fold import singular
from ragstream.indexer.stages.extract import nlp_lexicon as lex
from ragstream.indexer.stages.extract.nlp_junk import everyday_word, mostly_lowercase
from ragstream.indexer.stages.extract.nlp_tokens import NEXT_LOWERCASE_WORD

_ORIGIN_WORDS = lex.DEMONYMS | lex.GROUP_WORDS | lex.GROUP_QUALIFIERS
_OCCUPATION_NOUNS = frozenset(w.lower() for w in lex.OCCUPATIONS)
_BEFORE_A_NAME = frozenset(["the", "in", "at", "of", "from", "to", "near", "and", "or", "&"])
"""Words before a plural that leave it a name ("the Senators", "in Queens", "Queens and
Brooklyn")."""
_LISTED_NAME_AFTER = re.compile(r"(?:,|\s+(?:and|or|&))\s+[A-Z]")
"""A name listed after a word ("Queens and Brooklyn", "Jamaica, Queens, New York")."""
_COUNTS = frozenset(
    ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "several", "many"]
)
"""Words before a plural that count it, as a number does ("1929 Exhibitions")."""


def role(words: list[str], titled: bool) -> bool:
    """A title or a rank alone ("served as Regent", "an Archduke", "became Queen Consort"),
    an occupation alone or in the plural ("Songwriter and Arranger", "Choreographers"), or an
    occupation after a nationality ("a British Cinematographer"): a role, not a name. After a
    title an occupation's word is a surname ("Mr Singer"); a title's plural is `kind_plural`'s."""
    if not words:
        return False
    *before, last = words
    if before:
        return last in lex.OCCUPATIONS and all(w in _ORIGIN_WORDS for w in before)
    occupation = last in lex.OCCUPATIONS or last.removesuffix("s") in lex.OCCUPATIONS
    after_title = titled and last in lex.TITLE_AFTER  # "Queen Consort", "Prince Regent"
    return (
        last in lex.TITLES or last in lex.NOBLE_TITLES or after_title or (occupation and not titled)
    )


_GLOSS = re.compile(r"\s*\(\s*((?:[a-z][a-z-]*\s+){0,3}[a-z][a-z-]*)\s*\)")
"""A parenthesis of one to four lowercase words just after a word: its gloss ("(regent)")."""


def glossed_role(after: str) -> bool:
    """A word a parenthesis glosses as a role: "became Sessho (regent)", "Kampaku (regent)",
    an office's name in another language, not a name. `after` is the sentence after the word."""
    gloss = _GLOSS.match(after)
    return gloss is not None and role([gloss.group(1).split()[-1].capitalize()], titled=False)


def kind_plural(word: str, before: str, after: str) -> bool:
    """A kind of people or things, not a name: a title's plural after a word other than
    "the", a place's preposition or "and" ("two Lieutenants", "became Caliphs"; "the
    Senators", a team, "in Queens", the borough, and one listed with a name, "Queens and
    Brooklyn", stay names), or an everyday word's plural after a number ("the 1923 and 1929
    Exhibitions"; "Wells", "Hangouts" stay). `before` and `after` are the sentence's text
    around the word."""
    singular = _singular(word)
    previous = before.split()[-1:]
    if singular is None or not previous or _LISTED_NAME_AFTER.match(after):
        return False
    if singular in lex.TITLES:
        return previous[0].lower() not in _BEFORE_A_NAME
    counted = previous[0].isdigit() or previous[0].lower() in _COUNTS
    return counted and everyday_word(singular)


def qualifies_occupation(word: str, after: str) -> bool:
    """A word English writes mostly in lowercase, before a lowercase occupation: it
    qualifies the occupation ("starred Opera singer Lina Cavalieri", "a Jazz musician")."""
    following = NEXT_LOWERCASE_WORD.match(after)
    return following is not None and mostly_lowercase(word) and _occupation(following.group(1))


def certification(word: str, before: str) -> bool:
    """A record's sales award: "certified Platinum", "went Gold"."""
    return word in lex.CERTIFICATIONS and before.endswith(("certified ", "went "))


def _singular(word: str) -> str | None:
    """The singular of a capitalized English plural ("Monasteries" -> "Monastery"), or None."""
    single = singular(word.lower())
    if not single:
        return None
    kept = len(single) if word.lower().startswith(single) else len(single) - 1  # "-ies" -> "-y"
    return word[:kept] + single[kept:]


def _occupation(word: str) -> bool:
    """A lowercase occupation, singular or plural ("singer", "musicians")."""
    return word in _OCCUPATION_NOUNS or word.removesuffix("s") in _OCCUPATION_NOUNS
