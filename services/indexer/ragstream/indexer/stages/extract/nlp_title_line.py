"""The title line of an encyclopedic passage, when it names the passage's subject.

Encyclopedic text opens with its subject's name on a line of its own, then defines it
("Phoolwari" over "Phoolwari is a 1946 Indian film"). Such a line is a name when the passage
writes it again, when it is in sentence case or another language's and the definition
opens with it ("El Cielo en las manos is a 1950 Argentine film"), or when the name before
its comma opens the definition ("Redmond, Utah" over "Redmond is a town"). A title's own
words may type it where the passage does not: what follows its comma ("Ann Arbor,
Michigan", "John IV, Duke of Brittany"), an event's edition ("2018 Winter Olympics"), or a
word of it that the passage names alone as a person ("Jarlskog" of "Cecilia Jarlskog").
Pure functions of the passage's sentences and the names found in them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ragstream.common.text.analyzer import ENGLISH_STOPWORDS
from ragstream.indexer.stages.extract.names import entity_key
from ragstream.indexer.stages.extract.nlp_countries import regions
from ragstream.indexer.stages.extract.nlp_evidence import named_of_place, person_shaped
from ragstream.indexer.stages.extract.nlp_junk import everyday_word
from ragstream.indexer.stages.extract.nlp_lexicon import (
    EVENT,
    EVENT_SUFFIXES,
    EXTRA_STOPWORDS,
    LOCATION,
    NAME_PARTICLES,
    NOBLE_TITLES,
    PERSON,
    ROYAL_TITLES,
    TITLE_AFTER,
    TITLES,
)
from ragstream.indexer.stages.extract.nlp_model import GROUP
from ragstream.indexer.stages.extract.nlp_tokens import latin_tokens

TITLE_WORDS = 12
"""The longest title line read as a name ("Royal Commission into Institutional Responses to
Child Sexual Abuse", "The Body of the Dead Christ in the Tomb"); a longer line is a heading."""
_TITLE = re.compile(r"^[A-Z0-9][^。！？;]*$")
"""A title line: it may hold a title's own periods, question or exclamation marks and
colons ("Mr. Smith Carries On", "What's New, Mr. Magoo?", "Star Wars: Return of the Jedi:
Ewok Adventure"); every word capitalized (or a name particle, "François van der Merwe") and
the line written again in the chunk tell it from a sentence, or, for a title in sentence
case ("El Cielo en las manos", "Classical music"), a definition that opens with it."""
_COPULA_AFTER = re.compile(r"\s*(?:\([^()]*\)\s*)?,?\s*(?:is|was|are|were)\s")
"""What follows a subject defined by its sentence: "El Cielo en las manos is a 1950 film",
"Altid ballade ( English: ...) is a 1955 Danish drama film"."""
DISAMBIGUATION = re.compile(r"\s+\([^()]+\)$")
"""A title's last parenthesis, which tells it from others of its name ("(1913 film)")."""
_STOPWORDS = ENGLISH_STOPWORDS | EXTRA_STOPWORDS
_JOINERS = NAME_PARTICLES | {"and", "y", "e", "und", "et"}
"""Words that continue a name after its head ("Robert III of Dreux", "Ortega y Gasset")."""
_RANKS = "|".join(sorted(ROYAL_TITLES | {"Lord", "Lady"}))
_AFTER_RANKS = "|".join(sorted(TITLE_AFTER))
_NOBLE_QUALIFIER = re.compile(
    rf"^(?:\d+(?:st|nd|rd|th) )?(?:Grand |High )?(?:{_RANKS})(?: (?:{_AFTER_RANKS}))?"
    r" (?:(?:of|in) )?[A-Z]"
)
"""A rank and its land after a title's comma: "Duke of Brittany", "Count Palatine of
Simmern", "Grand Duke of Oldenburg", "Lord of Uncastillo", "3rd Earl of Stafford", "9th
Baron Dacre"."""


class TitleLine(NamedTuple):
    name: str
    head: str | None
    """The name before the title's comma, when the definition names the subject so
    ("Redmond" of "Redmond, Utah"); the passage's mentions of it are the title's."""


def title_line(sentences: Sequence[str], first_line: str) -> TitleLine | None:
    """The chunk's title line when the chunk names it again ("Phoolwari" over "Phoolwari is
    a 1946 film"): the repeat shows it is a name, not a heading like "Quarterly review". A
    title's last parenthesis tells it from others of its name and is not part of it
    ("Henry Moore (cricketer)", "The Pit and the Pendulum (1913 film)"). The first sentence
    must be the whole first line (or the line before its parenthesis, "It's Alive! (1974
    film)"): "Sgt." of "Sgt. Disco" and "Stop!" of "Stop! Or My Mom Will Shoot" are where
    the sentence splitter cut the line."""
    if len(sentences) < 2 or not _TITLE.match(sentences[0]):
        return None
    if sentences[0] not in (first_line, DISAMBIGUATION.sub("", first_line)):
        return None
    title = DISAMBIGUATION.sub("", sentences[0])
    words = title.split(" ")
    capitalized = all(
        w[:1].isupper() or w[:1].isdigit() or w in _STOPWORDS or w in NAME_PARTICLES for w in words
    )
    if len(words) > TITLE_WORDS or title.lower() in _STOPWORDS:
        return None
    definition = first_body_sentence(sentences)
    head = comma_head(title, definition)
    if not capitalized:
        # "The South African rand (sign: R; code: ZAR) is the currency of South Africa"
        start = len("The ") if definition.startswith(f"The {title}") else 0
        opens = definition.startswith(title, start)
        defined = opens and _COPULA_AFTER.match(definition, start + len(title))
        return TitleLine(title, head) if defined else None
    again = re.compile(rf"(?<![\w]){re.escape(title)}(?![\w])")
    if head is not None or any(again.search(s) for s in sentences[1:]):
        return TitleLine(title, head)
    return None


def first_body_sentence(sentences: Sequence[str]) -> str:
    """The sentence after the title line, past a parenthesis left alone ("(1974 film)")."""
    return next((s for s in sentences[1:] if not DISAMBIGUATION.fullmatch(" " + s)), "")


def comma_head(title: str, definition: str) -> str | None:
    """The name before a title's comma when the definition opens with it as its subject:
    "Redmond" of "Redmond, Utah" over "Redmond is a town in Sevier County", "Clock Tower" of
    "Clock Tower, Brighton" over "The Clock Tower (sometimes called ...) is". The title,
    place and all, names the entity: there are other Redmonds."""
    head, comma, qualifier = title.partition(", ")
    if not comma or "," in qualifier or not qualifier[:1].isupper():
        return None
    opens = re.match(rf"(?:The )?{re.escape(head)}(?:\s*\(|\s+([a-z]+))", definition)
    # "Robert III of Dreux (1185–1234) was ...": the head is not the whole subject
    return head if opens and opens.group(1) not in _JOINERS else None


def qualifier_type(title: str) -> str | None:
    """The type the words after a title's comma give its subject: a rank and its land make a
    person ("John IV, Duke of Brittany", "Mary of Lusignan, Countess of Brienne"), a country or
    a country's region a place ("Ann Arbor, Michigan", "San Juan, Puerto Rico"); else None."""
    head, comma, qualifier = title.partition(", ")
    if not comma or not head:
        return None
    if _NOBLE_QUALIFIER.match(qualifier):
        return PERSON
    office = head.split(" ", 1)[0] in TITLES and " of " in head  # "Mayor of Elizabeth, ..."
    return LOCATION if qualifier in regions() and not office else None


_EVENT_KINDS = "|".join(sorted(EVENT_SUFFIXES))
_EVENT_TITLE = re.compile(rf"^(?:\d{{4}}|\d+(?:st|nd|rd|th)) .*\b(?:{_EVENT_KINDS})$")
"""A title of one edition of an event, its year or ordinal first and its kind last: "2018
Winter Olympics", "1999 Alfred Dunhill Cup", "38th Chess Olympiad"."""


def title_event(title: str) -> str | None:
    """EVENT for the title of one edition of an event; else None. A mention in the text
    often drops the year ("the Winter Olympics"), so the title says it alone."""
    return EVENT if _EVENT_TITLE.match(title) else None


def named_person(title: str, types: Mapping[str, str]) -> bool:
    """True when a title shaped like a person's name ("Cecilia Jarlskog", "Ida of Lorraine")
    is the person the chunk names by a word of it alone, typed person there ("Jarlskog
    obtained her doctorate", "Ida was the daughter of ..."): the surname or given name of a
    name of two to four words, the name before "of" of a royal's. Not a title that opens
    with an everyday word ("Calling Philo Vance", a film; "Killing of Harambe") nor one with
    a possessive ("Knott's Berry Farm", "Jehovah's Witnesses")."""
    tokens = latin_tokens(title)
    if len(tokens) < 2 or everyday_word(tokens[0].text) or any(t.possessive for t in tokens):
        return False
    if person_shaped(tokens):
        words = {tokens[0].text, tokens[-1].text}
    elif named_of_place(tokens):
        words = {tokens[0].text}
    else:
        return False
    return any(types.get(entity_key(word)) == PERSON for word in words)


def surnamed(name: str, voted: Mapping[str, str]) -> bool:
    """True when a name shaped like a person's ends in a word the model reads alone as a
    person: "Johannes Brahms" in "inspired by Johannes Brahms's own", where the model tags
    "Brahms". `voted`: the model's type per key (nlp_model.voted_types), GROUP for a
    nationality. Not when its first word is a nationality ("German Hessian") or the rank of
    a peerage ("Baron Dacre"), nor when its last word is an everyday one ("Master Rapper",
    "African Media Barometer"); its first word alone does not type it ("Tang Dynasty")."""
    tokens = latin_tokens(name)
    if len(tokens) < 2 or any(t.possessive for t in tokens):
        return False
    first, last = tokens[0].text, tokens[-1].text
    if everyday_word(first) or everyday_word(last) or voted.get(entity_key(first)) == GROUP:
        return False
    peerage = len(tokens) == 2 and first in NOBLE_TITLES
    return not peerage and person_shaped(tokens) and voted.get(entity_key(last)) == PERSON
