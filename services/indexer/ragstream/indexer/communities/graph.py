"""The weighted, undirected graph that communities partition: entity keys joined by relations."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

Pair = tuple[str, str]
MIN_WEIGHT = 1e-6
"""Leiden needs positive weights: a relation weighted 0 still joins its entities, barely."""


def pair(a: str, b: str) -> Pair:
    """The canonical (sorted) form of an undirected edge."""
    return (a, b) if a <= b else (b, a)


@dataclass(slots=True)
class WeightedGraph:
    """Edges by canonical pair; a node exists while it has an edge (an entity with no relation
    belongs to no community, as in GraphRAG)."""

    weights: dict[Pair, float]

    @classmethod
    def of(cls, edges: Iterable[tuple[str, str, float]]) -> WeightedGraph:
        return cls({pair(a, b): max(float(w), MIN_WEIGHT) for a, b, w in edges})

    def nodes(self) -> set[str]:
        return {node for edge in self.weights for node in edge}

    def sorted_edges(self) -> list[tuple[str, str, float]]:
        """The edges sorted by key: the one input order every rebuild sees."""
        return [(a, b, w) for (a, b), w in sorted(self.weights.items())]

    def apply(self, changed: Mapping[Pair, float | None], gone_nodes: Iterable[str]) -> None:
        """Sets (a weight) or removes (None) the changed edges, then drops every edge of a
        node that is gone."""
        for edge, weight in changed.items():
            if weight is None:
                self.weights.pop(pair(*edge), None)
            else:
                self.weights[pair(*edge)] = max(weight, MIN_WEIGHT)
        gone = set(gone_nodes)
        if gone:
            for edge in [e for e in self.weights if e[0] in gone or e[1] in gone]:
                del self.weights[edge]
