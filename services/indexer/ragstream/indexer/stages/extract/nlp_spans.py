"""Name spans found in a sentence, alias pairs between them, and the type a chunk gives each name.

A span carries the evidence its own occurrence gives (a title before a person, a suffix such
as "University", a version number); the chunk's type for a name combines the evidence of
all its occurrences and of its aliases ("东海海洋感知研究所（ESIOS）"), strongest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ragstream.indexer.stages.extract.nlp_lexicon import CONCEPT, PRODUCT, TYPE_PRIORITY

_PAREN = re.compile(r"\s*[（(]([^（）()]*)[）)]")
_ALIAS_FILLER = re.compile(
    r"以下简称|简称|下称|又称|也称|即|also known as|a\.k\.a\.|aka|formerly|or|[\s,，;；、:：]"
)


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
    """(name, alias) for every span directly followed by parentheses holding only names.

    "东海海洋感知研究所（East China Sea Institute of Ocean Sensing，简称 ESIOS）" pairs the
    Chinese name with both; "Mira Okafor (Tern sensor team, Halvorsen Aquatics)" pairs
    nothing, since "sensor team" is not a name.
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
        if not _ALIAS_FILLER.sub("", "".join(rest)):
            pairs.extend((span.name, alias.name) for alias in inner)
    return pairs


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
