"""Grouping undirected edges by endpoint: the one rule both graph stores answer `edges_of` by."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragstream.common.models import GraphEdge

Pair = tuple[str, str]


def by_endpoint(found: Mapping[Pair, GraphEdge], keys: Sequence[str]) -> dict[str, list[GraphEdge]]:
    """Each key's edges (a self-loop once), sorted by pair; every key present."""
    result: dict[str, list[GraphEdge]] = {k: [] for k in keys}
    for pair in sorted(found):
        for endpoint in set(pair):
            if endpoint in result:
                result[endpoint].append(found[pair])
    return result
