"""The type evidence a Latin-script name gives: from its own words, and from the words around
one occurrence of it.

Its own words: a head that is an organization's or a place's suffix ("Halvorsen Aquatics
Ltd", "Port of Bergen", "Suvorov Glacier"), an event's prefix or suffix, a version number (a
product), an honour's head (a concept). Around it: a role or a speech verb before a
person-shaped name, "who" or a role after it; an organization's role or verb after a name; a
preposition of place before a name that ends its phrase, a place's kind or a bearing before
it ("the town of Waterloo", "north of Uppsala", "in southern Zealand"); a dateline, a bearing
or a place's kind after it ("Bergen, 3 May", "Stafford to the northwest", "the Rongbuk
glacier").
"""

from __future__ import annotations

import re

from ragstream.indexer.stages.extract import nlp_lexicon as lex
from ragstream.indexer.stages.extract.nlp_countries import regions
from ragstream.indexer.stages.extract.nlp_junk import everyday_word, mostly_lowercase
from ragstream.indexer.stages.extract.nlp_model import group_phrase
from ragstream.indexer.stages.extract.nlp_tokens import YEAR, Token

_WORD_BEFORE = re.compile(r"([A-Za-z][\w'’-]*)[ :]*$")
_MONTH = "|".join(sorted(lex.MONTHS))
DATELINE = re.compile(
    rf"^,(?:\s+[A-Z][\w.]*(?:\s+[A-Z][\w.]*)*,)?\s*(?:\d{{1,2}}\s+(?:{_MONTH})|(?:{_MONTH})\s+\d)"
)
"""A place's dateline after it: "Bergen, 3 May", "Oslo, Norway, March 4"."""
DATE_AFTER = re.compile(rf"^\s+(?:{_MONTH})\b")
_ORG_SUFFIX = "|".join(sorted(lex.ORG_SUFFIXES | lex.MEDIA_SUFFIXES))
_END = r"(?![\w'’-])"  # "company" but not "company-wide" or "company's"
_PERSON_AFTER = re.compile(
    r"^,\s+who\b|^\s+and\s+(?:his|her)\b"
    r"|^(?:,\s+|\s+(?:is|was|has been|had been|became|becomes|remains|serves as|served as)\s+)"
    r"(?:(?:a|an|the|our|its|his|her|their)\s+)?(?:(?!of\b)[\w-]+\s+){0,2}?"
    rf"(?:{lex.PERSON_ROLES}){_END}"
    rf"|^\s+of\s+(?:[A-Z][\w&'’.-]*\s+){{1,4}}?(?:{_ORG_SUFFIX}){_END}"
)
_PERSON_AGENT = re.compile(rf"\b(?:{lex.PERSON_AGENT_VERBS})\s+by\s+$")
_ROLE_IS = re.compile(
    rf"\b(?:{lex.PERSON_ROLES}|editor|editor-in-chief)\s+"
    r"(?:is|was|has been|had been|became|becomes|remains|remained)\s+$",
    re.IGNORECASE,
)
"""A role, then the person who holds it: "The current editor-in-chief is Esther Duflo"."""
_ORG_AFTER = re.compile(
    r"^(?:,\s+|\s+is\s+)(?:a|an|the)\s+(?:(?!of\b)[\w-]+\s+){0,4}?"
    rf"(?:{lex.ORG_ROLES}){_END}|^\s+(?:{lex.ORG_VERBS_AFTER})\b"
)
_PLACE_OF = re.compile(
    r"\b(?:town|city|village|hamlet|county|state|province|district|municipality|township"
    r"|region|(?:north|south|east|west)(?:east|west)?)\s+of\s+(?:the\s+)?$",
    re.IGNORECASE,
)
"""A place's kind or a bearing before a name: "in the town of Waterloo", "north of Uppsala"."""
_BEARING_BEFORE = re.compile(
    r"\b(?:in|across|throughout|of)\s+(?:the\s+)?(?:far\s+)?"
    r"(?:(?:north|south)(?:-?(?:east|west))?ern|eastern|western|central)\s+$"
)
"""A bearing written before a name, after a preposition: "in southern Zealand", "across
north-western Europe" (in lowercase: "Northern Ireland" is a name of its own)."""
_KIND_AFTER = re.compile(
    r"^\s+(?:glacier|river|valley|lake|mountains|peninsula|desert|basin|bay|gulf|strait"
    r"|canyon|plateau|delta|coast|region|province|district|county|prefecture)\b"
)
"""A place's kind written after its name in lowercase: "the Rongbuk glacier", "the Kanto
region"."""
_BEARING_AFTER = re.compile(r"^,?\s+to the (?:north|south|east|west)(?:east|west)?\b")
"""A bearing after a name: "Stafford to the northwest, Sugar Land to the west"."""
_WORK_BEFORE = re.compile(
    r"(?<!this )(?<!which )(?<!that )(?<!same )(?<!the first )\b(?:film|movie|novel|novella"
    r"|album|song|sitcom|miniseries|series|opera|poem|painting|mixtape|documentary|EP"
    r"|anthology|manga|anime|ballet|symphony|telenovela)\s+(?:The\s+)?$"
)
"""A work's kind written just before its title: "the 2011 film Moneyball", "the miniseries
The Kennedys". Not "play", "single" or "musical", which are other words too, nor after
"this" or "which" ("in which film Sharib Hashmi is the lead")."""
_CONTEXT_CHARS = 48
"""How far before a name its cues are looked for ("written by ESIOS engineer")."""


_ERA_YEAR = re.compile(r"(?:AD|BC|BCE|CE)\s?\d{1,4}|\d{1,4}\s?(?:AD|BC|BCE|CE)")
"""A year with its era ("AD 43", "53AD", "206 BC"): a time, which links the passages that
name it, not a product for its digits."""


_ROADS = "Route|Highway|Interstate|Motorway|Expressway|Freeway|Autobahn|Road"
_NUMBERED_ROAD = re.compile(
    rf"(?:\S+ )*(?:{_ROADS}) [A-Z]{{0,2}}-?\d{{1,4}}[A-Z]?|[A-Z]{{1,2}}-?\d{{1,4}} (?:{_ROADS})"
)
"""A road by its number: "West Virginia Route 16", "Interstate H-3", "A4 Highway": a place,
not a product for its digits."""
_DOCTRINE = re.compile(r"[A-Z][a-z]+isms?")
"""A doctrine or a movement: "Scholasticism", "Marxism"."""
_BEARINGS = lex.DIRECTIONS | {"Northern", "Southern", "Eastern", "Western", "Central", "Upper"}
_SHAPES = ((_ERA_YEAR, lex.CONCEPT), (_NUMBERED_ROAD, lex.LOCATION), (_DOCTRINE, lex.CONCEPT))
"""Whole names whose shape alone types them."""


def _whole_name_type(texts: list[str]) -> str | None:
    """The type a name's shape alone gives it (_SHAPES), or a bearing before a country's or
    a region's name ("Northern Bulgaria", "South Wales", "Upper Austria")."""
    kind = next((kind for shape, kind in _SHAPES if shape.fullmatch(" ".join(texts))), None)
    if kind is None and texts[0] in _BEARINGS and " ".join(texts[1:]) in regions():
        return lex.LOCATION
    return kind


def intrinsic(tokens: list[Token]) -> set[str]:
    """Evidence from the name's own words: suffixes, prefixes, version numbers."""
    texts = [token.text for token in tokens]
    whole = _whole_name_type(texts)
    if whole is not None:
        return {whole}
    words = [t.text for t in tokens if t.kind in ("name", "letter")]
    inner = [i for i, text in enumerate(texts) if i and text in ("of", "for")]
    head = texts[inner[0] - 1] if inner else words[-1]
    evidence: set[str] = set()
    if head in lex.AWARD_HEADS:
        evidence.add(lex.CONCEPT)
    if head in lex.ORG_SUFFIXES or head in lex.MEDIA_SUFFIXES:
        evidence.add(lex.ORGANIZATION)
    place_of = bool(inner) and head in lex.PLACE_OF_HEADS
    if (
        head in lex.LOCATION_SUFFIXES
        or place_of
        or (len(words) == 2 and words[0] in lex.LOCATION_PREFIXES)
    ):
        evidence.add(lex.LOCATION)
    series = len(tokens) == 2 and texts[0] == "Series" and tokens[1].kind == "letter"
    prefixed = texts[0] in lex.EVENT_PREFIXES and len(tokens) > 1
    if series or prefixed or head in lex.EVENT_SUFFIXES:
        evidence.add(lex.EVENT)
    if any(char.isdigit() for text in texts if not YEAR.match(text) for char in text):
        evidence.add(lex.PRODUCT)
    if texts[0] in lex.NOBLE_TITLES and (
        named_of_place(tokens[1:])
        or (len(tokens) > 2 and person_shaped(tokens[1:]) and not evidence)  # "Duke Energy Corp"
    ):
        evidence.add(lex.PERSON)  # "Archduke Anton of Austria", "Maharaja Ranjeet Singh"
    if len(tokens) == 4 and numbered(tokens[:2]) and named_of_place([tokens[0], *tokens[2:]]):
        evidence.add(lex.PERSON)  # "Engelbert I of Berg"
    # "Zayed bin Sultan", "Conall mac Comgaill"; not "Zayed bin Sultan Mosque"
    patronym = any(text in lex.PATRONYMICS for text in texts[1:-1])
    if patronym and not evidence and not everyday_word(texts[-1]):
        evidence.add(lex.PERSON)
    return evidence


_REGNAL = re.compile(r"^(?=[IVX])X{0,3}(?:IX|IV|V?I{0,3})$")


def numbered(tokens: list[Token]) -> bool:
    """A name and its regnal number ("Engelbert I", "Louis XIV")."""
    return len(tokens) == 2 and tokens[0].kind == "name" and bool(_REGNAL.match(tokens[1].text))


def named_of_place(tokens: list[Token]) -> bool:
    """A name, "of" and a name: a royal's or a noble's ("Ileana of Romania" after
    "Princess", "Anton of Austria" after "Archduke")."""
    return (
        len(tokens) == 3
        and tokens[0].kind == tokens[2].kind == "name"
        and tokens[0].text not in lex.TITLE_AFTER
        and tokens[1].text == "of"
    )


def context(tokens: list[Token], shaped: bool, titled: bool, sentence: str, after: str) -> set[str]:
    """Evidence from the words around this occurrence; `shaped`: the name is shaped like a
    person's and its own words give no other type (`person_shaped`, `intrinsic`)."""
    start = tokens[0].start
    window = sentence[max(0, start - _CONTEXT_CHARS) : start]
    match = _WORD_BEFORE.search(window)
    before = match.group(1).lower() if match else ""
    evidence: set[str] = set()
    if shaped and (titled or _person_context(before, window, after)):
        evidence.add(lex.PERSON)
    if titled and named_of_place(tokens):
        evidence.add(lex.PERSON)  # "Ileana of Romania" after "Princess"
    if before in lex.ORG_BEFORE or _ORG_AFTER.match(after):
        evidence.add(lex.ORGANIZATION)
    has_digit = any(char.isdigit() for token in tokens for char in token.text)
    if not has_digit and (before in lex.LOCATION_BEFORE and _ends_phrase(after)):
        evidence.add(lex.LOCATION)
    if _WORK_BEFORE.search(window):
        evidence.add(lex.PRODUCT)
    if DATELINE.match(after) or _BEARING_AFTER.match(after):
        evidence.add(lex.LOCATION)
    if not has_digit and _PLACE_OF.search(window):
        evidence.add(lex.LOCATION)
    if not has_digit and (_KIND_AFTER.match(after) or _BEARING_BEFORE.search(window)):
        name = " ".join(token.text for token in tokens)
        # "the Iberian peninsula", "a Congressional district": an adjective names no place
        if not group_phrase(name) and not mostly_lowercase(name):
            evidence.add(lex.LOCATION)
    return evidence


def person_shaped(tokens: list[Token]) -> bool:
    """One to four capitalized words of letters (apostrophes and hyphens allowed), with name
    particles other than "of" between them ("François van der Merwe", "Zein bint Hussein")."""
    words = [token for token in tokens if token.kind != "particle"]
    return (
        len(words) <= 4
        and tokens[0].kind == "name"
        and tokens[-1].kind == "name"
        and all(token.text != "of" for token in tokens)
        and all(
            token.kind == "name"
            and not token.text.isupper()
            and token.text.replace("'", "").replace("’", "").replace("-", "").isalpha()
            for token in words
        )
    )


def _person_context(word_before: str, before: str, after: str) -> bool:
    """A role or speech verb before, a role or "who" after, "led by" or "the editor was"
    before, or a Chinese job title around the name."""
    return (
        word_before in lex.PERSON_BEFORE
        or bool(_PERSON_AFTER.match(after))
        or bool(_PERSON_AGENT.search(before))
        or bool(_ROLE_IS.search(before))
        or before.rstrip().endswith(lex.CHINESE_ROLES)
        or after.lstrip().startswith(lex.CHINESE_TITLES_AFTER)
    )


def _ends_phrase(after: str) -> bool:
    """The name ends its phrase: punctuation, the end, or a function word follows."""
    rest = after.lstrip()
    if not rest or not rest[0].isalnum():
        return True
    word = re.match(r"[A-Za-z]+", rest)
    return word is not None and word.group().lower() in lex.PHRASE_ENDERS
