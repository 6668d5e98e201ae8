"""Name spans found in a sentence, alias pairs between them, and the type a chunk gives each name.

A span carries the evidence its own occurrence gives (a title before a person, a suffix such
as "University", a version number); the chunk's type for a name combines the evidence of
all its occurrences and of its aliases ("东海海洋感知研究所（ESIOS）"), strongest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ragstream.common.text.fold import abbreviation_letters
from ragstream.indexer.stages.extract import nlp_lexicon as lex
from ragstream.indexer.stages.extract.nlp_lexicon import CONCEPT, PERSON, PRODUCT, TYPE_PRIORITY

_PAREN = re.compile(r"\s*[（(]([^（）()]*)[）)]")
_IDEOGRAPH = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W_]+")
_PERSON_WORD = re.compile(r"^(?:[A-Z]\.|[A-Z][a-z]+(?:[-'’][A-Za-z][a-z]+)*)$")
_NOT_PERSON_HEADS = (
    lex.ORG_SUFFIXES | lex.MEDIA_SUFFIXES | lex.LOCATION_SUFFIXES | lex.EVENT_SUFFIXES
)
_ALIAS_WORDS = r"以下简称|简称|下称|又称|也称|即|also known as|a\.k\.a\.|aka|formerly|or"
"""Words in the parentheses that say their names are other names of the one before."""
_ALIAS_SAID = re.compile(_ALIAS_WORDS)
_ALIAS_FILLER = re.compile(rf"{_ALIAS_WORDS}|[\s,，;；、:：]")


@dataclass(frozen=True, slots=True)
class Span:
    name: str
    start: int
    end: int
    evidence: frozenset[str] = frozenset()
    """Entity types this occurrence argues for (see nlp_lexicon.TYPE_PRIORITY)."""

    @property
    def length(self) -> int:
        return self.end - self.start


def non_overlapping(spans: Iterable[Span]) -> list[Span]:
    """The longest spans first, each kept only if it overlaps no kept span; in text order."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (-s.length, s.start)):
        if all(span.end <= other.start or other.end <= span.start for other in kept):
            kept.append(span)
    return sorted(kept, key=lambda s: s.start)


def alias_pairs(sentence: str, spans: Sequence[Span]) -> list[tuple[str, str]]:
    """(name, alias) for every span directly followed by parentheses holding only names,
    each one another name of it (`_another_name`).

    "东海海洋感知研究所（East China Sea Institute of Ocean Sensing，简称 ESIOS）" pairs the
    Chinese name with both, "Halvorsen Aquatics (HA)" the two; "Mira Okafor (Tern sensor
    team, Halvorsen Aquatics)" pairs nothing, since "sensor team" is not a name, and
    "Esther Duflo (MIT)" nothing: a person's affiliation, not another name of hers; nor
    "Stockholm Arlanda Airport (IATA: ARN, ICAO: ESSA)": labelled codes, not its names.
    """
    pairs: list[tuple[str, str]] = []
    for span in spans:
        match = _PAREN.match(sentence, span.end)
        if match is None:
            continue
        first, last = match.start(1), match.end(1)
        inner = [s for s in spans if first <= s.start and s.end <= last]
        if not inner:
            continue
        rest, cursor = [], first
        for alias in inner:
            rest.append(sentence[cursor : alias.start])
            cursor = alias.end
        rest.append(sentence[cursor:last])
        filler = "".join(rest)
        said = bool(_ALIAS_SAID.search(filler))
        labelled = not said and any(colon in filler for colon in ":：")
        if not labelled and not _ALIAS_FILLER.sub("", filler):
            pairs.extend((span.name, a.name) for a in inner if said or _another_name(span, a))
    return pairs


def _another_name(span: Span, alias: Span) -> bool:
    """Whether `alias`, in parentheses after `span` with no word saying so, is another name
    of it: one of them written in ideographs (a gloss), one word whose letters are initials
    of the other's words, in order, from the first ("ESIOS" of "East China Sea Institute of
    Ocean Sensing"), or two names both a person's or neither ("Judge Dee (Ti Jen-chieh)",
    "Society of Jesus (Jesuits)"). A person's name before an institution's or an acronym is
    an affiliation ("Esther Duflo (MIT)", "George T. Solomon (George Washington
    University)")."""
    name, other = span.name, alias.name
    if _IDEOGRAPH.search(name) or _IDEOGRAPH.search(other):
        return True
    if any(
        " " not in short and _initials_of(abbreviation_letters(short), _WORD.findall(full))
        for short, full in ((other, name), (name, other))
    ):
        return True
    return _a_persons(span) == _a_persons(alias)


def _a_persons(span: Span) -> bool:
    """A person's name by its evidence, or by its shape: two to four capitalized words of
    letters or initials, the last no institution's, place's or event's head."""
    words = span.name.split()
    shaped = (
        2 <= len(words) <= 4
        and all(_PERSON_WORD.match(word) for word in words)
        and words[-1] not in _NOT_PERSON_HEADS
    )
    return shaped or PERSON in span.evidence


def _initials_of(letters: str, words: list[str]) -> bool:
    initials = iter(word[0].upper() for word in words)
    return (
        len(letters) >= 2
        and len(words) >= 2
        and letters[0] == words[0][0].upper()
        and all(letter in initials for letter in letters)
    )


def resolve_types(
    names: Mapping[str, str],
    evidence: Mapping[str, frozenset[str]],
    aliases: Iterable[tuple[str, str]],
) -> dict[str, str]:
    """Type per entity key: the strongest evidence of the name or its aliases, else concept.

    `names` maps keys to a spelling; aliases are pairs of keys. A name that begins another
    name with product evidence is that product's family ("Tern" of "Tern S3").
    """
    merged = {key: set(evidence.get(key, frozenset())) for key in names}
    links = [(a, b) for a, b in aliases if a in merged and b in merged]
    for _ in range(2):  # twice, so evidence crosses a chain of two aliases
        for first, second in links:
            shared = merged[first] | merged[second]
            merged[first], merged[second] = set(shared), set(shared)
    products = [names[key] for key, kinds in merged.items() if PRODUCT in kinds]
    for key, name in names.items():
        if any(product.startswith(name + " ") for product in products):
            merged[key].add(PRODUCT)
    return {
        key: next((kind for kind in TYPE_PRIORITY if kind in kinds), CONCEPT)
        for key, kinds in merged.items()
    }
