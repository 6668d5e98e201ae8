"""Leiden through graspologic-native (Rust; MIT), the implementation GraphRAG clusters with.

Only this module touches the library. Its result is a function of the edge list's order,
the starting communities and the seed, so every caller passes edges sorted by key.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import graspologic_native as gn


@dataclass(frozen=True, slots=True)
class LeidenParams:
    max_size: int = 10
    """A community with more members is split into sub-communities, level by level (GraphRAG's
    `max_cluster_size`)."""
    resolution: float = 1.0
    """Higher gives more, smaller communities (modularity's resolution parameter)."""
    seed: int = 0xDECAF
    """Leiden's random choices; fixed, so a rebuild of the same graph is the same partition."""
    randomness: float = 0.001
    """Leiden's refinement randomness (the library's default)."""


def leiden(
    edges: Sequence[tuple[str, str, float]],
    params: LeidenParams,
    start: Mapping[str, int] | None = None,
) -> list[list[str]]:
    """The communities Leiden finds (each sorted, the list sorted by first member), starting
    from `start` (a community number for every node of `edges`) or from singletons."""
    if not edges:
        return []
    _, membership = gn.leiden(
        list(edges),
        starting_communities=dict(start) if start is not None else None,
        resolution=params.resolution,
        randomness=params.randomness,
        seed=params.seed,
        use_modularity=True,
    )
    groups: defaultdict[int, list[str]] = defaultdict(list)
    for node, community in membership.items():
        groups[community].append(node)
    return sorted(sorted(group) for group in groups.values())
