"""Newman's modularity of a partition of a weighted graph: the measure by which the
incremental partition is held to a rebuild's."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from ragstream.indexer.communities.graph import WeightedGraph


def modularity(
    graph: WeightedGraph, membership: Mapping[str, str], resolution: float = 1.0
) -> float:
    """Q = sum over communities c of (W_c / m) - resolution * (D_c / 2m)^2, where m is the
    total edge weight, W_c the weight inside c and D_c the summed weighted degree of its
    nodes (a self-loop counts twice in a degree, as in Leiden's own quality function).
    Nodes missing from `membership` are communities of their own. 0.0 for a graph without
    weight."""
    total = sum(graph.weights.values())
    if total <= 0.0:
        return 0.0
    inside: defaultdict[str, float] = defaultdict(float)
    degree: defaultdict[str, float] = defaultdict(float)
    for (a, b), weight in graph.weights.items():
        ca, cb = membership.get(a, "\0" + a), membership.get(b, "\0" + b)
        degree[ca] += weight
        degree[cb] += weight
        if ca == cb:
            inside[ca] += weight
    return sum(inside[c] / total - resolution * (degree[c] / (2.0 * total)) ** 2 for c in degree)
