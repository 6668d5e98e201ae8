"""How SearchEntities orders what the hybrid search found for a name (pure functions).

A search box for names is answered as a reader expects:
1. the entity whose own name is the query (spelling folded) comes first;
2. then the entities the query names: every word of it is a word of the entity's name or of
   one of its aliases ("Halvorsen" names both Halvorsen Aquatics and Ingrid Halvorsen, whose
   surname resolution made an alias). Among these the better-connected entity comes first,
   so a company the corpus is about outranks a person whose surname it carries;
3. then the rest, by their fused BM25 and dense score.
A CJK word counts as named when it is a substring of the name (CJK names are not spaced).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragstream.common.text.fold import fold, is_cjk, spelling


@dataclass(frozen=True, slots=True)
class Candidate:
    key: str
    name: str
    aliases: tuple[str, ...]
    degree: int
    score: float
    """The fused retrieval score."""


def _words(name: str) -> set[str]:
    return set(spelling(name).split())


def names_all(words: Iterable[str], name: str) -> bool:
    """Whether every one of `words` (spelling-folded) is a word of `name`."""
    have = _words(name)
    folded = spelling(name)
    return all(w in have or (is_cjk(w) and w in folded) for w in words)


def rank(query: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """`candidates` in the order described above; ties keep the retrieval order."""
    own = fold(query)
    words = spelling(query).split()

    def order(c: Candidate) -> tuple[int, int, float]:
        if own and fold(c.name) == own:
            return (0, 0, -c.score)
        if words and any(names_all(words, n) for n in (c.name, *c.aliases)):
            return (1, -c.degree, -c.score)
        return (2, 0, -c.score)

    return sorted(candidates, key=order)
