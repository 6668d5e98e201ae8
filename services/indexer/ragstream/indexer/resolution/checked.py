"""Joins by the LLM's verdicts on candidate pairs (pure functions).

The rules' groups come first; a pair the LLM calls one thing then joins the two groups it
links, closest names first (ties by key), unless the join would put together two keys the LLM
called different, two specific types, or more than `max_size` keys. So no chain of "same"
verdicts merges what one "different" verdict holds apart, and the result depends on the
verdicts present, never on the order in which they were given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ragstream.common.derive import FALLBACK_TYPES


@dataclass(frozen=True, slots=True)
class Verdict:
    a: str
    b: str
    same: bool
    score: float
    """The cosine of the two names' vectors (orders the joins: closest first)."""


class Typed(Protocol):
    @property
    def type(self) -> str: ...


def joined(
    classes: Sequence[Sequence[str]],
    verdicts: Sequence[Verdict],
    members: Mapping[str, Typed],
    max_size: int,
) -> list[list[str]]:
    """`classes` with the joins the "same" verdicts make; each class sorted, the list too."""
    groups = {i: sorted(keys) for i, keys in enumerate(classes)}
    root = {key: i for i, keys in groups.items() for key in keys}
    apart = {frozenset((v.a, v.b)) for v in verdicts if not v.same}
    for verdict in sorted((v for v in verdicts if v.same), key=lambda v: (-v.score, v.a, v.b)):
        if verdict.a not in root or verdict.b not in root:
            continue
        first, second = root[verdict.a], root[verdict.b]
        if first == second:
            continue
        merged = groups[first] + groups[second]
        if len(merged) > max_size or not one_type(merged, members):
            continue
        if any(frozenset((x, y)) in apart for x in groups[first] for y in groups[second]):
            continue
        keep, drop = min(first, second), max(first, second)
        groups[keep] = sorted(merged)
        for key in groups.pop(drop):
            root[key] = keep
    return sorted(groups.values())


def one_type(keys: Sequence[str], members: Mapping[str, Typed]) -> bool:
    """Whether the keys hold at most one type besides the fallback ones."""
    return len({members[k].type for k in keys} - set(FALLBACK_TYPES)) <= 1
