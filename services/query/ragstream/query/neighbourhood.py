"""Which entities a neighbourhood keeps: a breadth-first walk, ring by ring, capped.

Nearer entities always come before farther ones, so a cap never keeps an entity two
relations away while dropping one a single relation away. Within a ring, the entity joined
by the heaviest relation comes first (the weight sums the mentions of a relation, so it is
how often the documents connect the two), then the better-connected one (many relations
are mentioned once, and among those a hub tells more than a leaf), then by key, so the
same graph always gives the same neighbourhood on every backend.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ragstream.common.models import GraphEdge


@dataclass(frozen=True, slots=True)
class Reached:
    """An entity found by the walk."""

    key: str
    hops: int
    """Relations between it and the centre (0: the centre)."""
    weight: float = 0.0
    """The heaviest relation that joined it to the previous ring."""


def other_end(edge: GraphEdge, key: str) -> str:
    return edge.target if edge.source == key else edge.source


def next_ring(
    frontier: Sequence[str],
    edges: Mapping[str, Sequence[GraphEdge]],
    known: Collection[str],
    hops: int,
) -> list[Reached]:
    """The entities one relation beyond `frontier` that are not `known` yet, by key, each
    with its heaviest joining relation. `edges` holds each frontier key's relations."""
    best: dict[str, float] = {}
    for key in frontier:
        for edge in edges.get(key, ()):
            other = other_end(edge, key)
            if other not in known:
                best[other] = max(best.get(other, edge.weight), edge.weight)
    return [Reached(key, hops, best[key]) for key in sorted(best)]


def ranked(ring: Sequence[Reached], degrees: Mapping[str, int]) -> list[Reached]:
    """Heaviest joining relation first, then the highest degree, then by key."""
    return sorted(ring, key=lambda r: (-r.weight, -degrees.get(r.key, 0), r.key))
