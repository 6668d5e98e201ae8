"""Scores of a graph's entities against gold things (graph_labels.Thing); pure functions.

A gold name is found when an entity of the store has it as its name or as one of its
aliases, compared by entity key (case, width and whitespace folded, as the merge does).
- Type accuracy: over the found names whose gold type is one of TYPED, the share whose
  entity has the gold type (names typed `concept` by hand are counted apart: a model that
  calls them anything is not wrong in a way these types measure).
- Duplicate pairs left: gold same-as pairs (two names of one thing) both found but on two
  entities; the share is of the gold pairs both of whose names were found.
- Wrong merges: pairs of found names of two different things that sit on one entity; the
  share is of all pairs of found names that sit on one entity (the merges).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from ragstream.cli.graph_labels import Thing
from ragstream.common.models import entity_key

TYPED = ("person", "organization", "location", "product", "event")


@dataclass(frozen=True, slots=True)
class StoreEntity:
    key: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GraphScore:
    names: int
    found: int
    typed: int
    """Found names whose gold type is in TYPED."""
    type_correct: int
    gold_pairs: int
    pairs_found: int
    duplicate_pairs: int
    merges: int
    wrong_merges: int
    per_type: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Gold type -> (correct, found)."""
    confusions: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(gold type, store type) -> count, for the typed names typed wrong."""
    pairs_left: tuple[tuple[str, str], ...] = ()
    """The gold names of the duplicate pairs left."""

    @property
    def type_accuracy(self) -> float:
        return self.type_correct / self.typed if self.typed else 0.0

    @property
    def duplicate_share(self) -> float:
        return self.duplicate_pairs / self.pairs_found if self.pairs_found else 0.0

    @property
    def wrong_merge_share(self) -> float:
        return self.wrong_merges / self.merges if self.merges else 0.0


def entity_index(entities: Sequence[StoreEntity]) -> dict[str, StoreEntity]:
    """Entity key of every name and alias -> its entity; a name wins over another's alias."""
    index: dict[str, StoreEntity] = {}
    for entity in entities:
        for alias in entity.aliases:
            index.setdefault(entity_key(alias), entity)
    index.update({entity_key(entity.name): entity for entity in entities})
    return index


def score(things: Sequence[Thing], entities: Sequence[StoreEntity]) -> GraphScore:
    index = entity_index(entities)
    located = [
        (number, thing, index.get(entity_key(name)))
        for number, thing in enumerate(things)
        for name in thing.names
    ]
    found = [(n, thing, e) for n, thing, e in located if e is not None]
    per_type: dict[str, tuple[int, int]] = {}
    confusions: Counter[tuple[str, str]] = Counter()
    for _, thing, entity in found:
        if thing.type in TYPED:
            right, seen = per_type.get(thing.type, (0, 0))
            per_type[thing.type] = (right + (entity.type == thing.type), seen + 1)
            if entity.type != thing.type:
                confusions[thing.type, entity.type] += 1
    gold_pairs = sum(len(t.names) * (len(t.names) - 1) // 2 for t in things)
    same_thing = [(a, b) for a, b in combinations(found, 2) if a[0] == b[0]]
    merged = [(a, b) for a, b in combinations(found, 2) if a[2].key == b[2].key]
    return GraphScore(
        names=len(located),
        found=len(found),
        typed=sum(seen for _, seen in per_type.values()),
        type_correct=sum(right for right, _ in per_type.values()),
        gold_pairs=gold_pairs,
        pairs_found=len(same_thing),
        duplicate_pairs=sum(1 for a, b in same_thing if a[2].key != b[2].key),
        merges=len(merged),
        wrong_merges=sum(1 for a, b in merged if a[0] != b[0]),
        per_type=per_type,
        confusions=confusions,
        pairs_left=tuple(_pairs_left(things, index)),
    )


def _pairs_left(things: Sequence[Thing], index: dict[str, StoreEntity]) -> list[tuple[str, str]]:
    left = []
    for thing in things:
        for a, b in combinations(thing.names, 2):
            found_a, found_b = index.get(entity_key(a)), index.get(entity_key(b))
            if found_a is not None and found_b is not None and found_a.key != found_b.key:
                left.append((a, b))
    return left
