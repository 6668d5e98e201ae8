"""The two ways a partition is made: a full rebuild, and the frontier update from the previous
partition around the keys a merge batch touched (the dynamic Leiden of arXiv 2405.11658 and
2410.15451, done with a static Leiden's starting-membership input)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from ragstream.indexer.communities.graph import WeightedGraph, pair
from ragstream.indexer.communities.leiden import LeidenParams, leiden
from ragstream.indexer.communities.partition import (
    Community,
    Partition,
    assign_ids,
    drafts_under,
)

SUPER = "\0"
"""Marks the node standing for a whole unaffected community; no entity key starts with it."""
GHOST = "\1"
"""Marks the node holding a collapsed community's inner weight (see `_collapsed`)."""


def rebuild(
    graph: WeightedGraph, params: LeidenParams, previous: Partition | None = None
) -> Partition:
    """Seeded Leiden over the edges sorted by key, then the sub-levels: the same graph gives
    the same communities whatever order its edges were made in. Ids carry over from
    `previous` where membership mostly persists; from nothing they are content ids."""
    tops = leiden(graph.sorted_edges(), params)
    return assign_ids(drafts_under(graph, tops, params), previous or Partition())


def update(
    previous: Partition, graph: WeightedGraph, touched: Iterable[str], params: LeidenParams
) -> Partition:
    """Re-optimizes the top level around `touched` (the entity keys a batch changed, the two
    entities of every changed relation among them), starting from `previous`.

    Every member of a community that holds a touched entity is free to move; every other
    community is collapsed into one node, which keeps the modularity of any partition of this
    smaller graph equal to that of the same partition of the whole graph (Leiden's own
    aggregation step). Leiden then starts from the previous
    communities, so a free node moves only where modularity gains, and a collapsed community
    may be joined but not split. Communities whose members are unchanged keep their ids and
    sub-levels; the rest get their sub-levels anew and ids by overlap with the previous ones.
    """
    old_top = previous.top()
    touched_set = set(touched)
    nodes = graph.nodes()
    # A member that left the graph makes its community affected even if not named.
    affected = {old_top[n] for n in touched_set if n in old_top}
    affected |= {c for n, c in old_top.items() if n not in nodes}
    free = {n for n in nodes if n in touched_set or n not in old_top or old_top[n] in affected}
    groups = leiden(*_collapsed(graph, old_top, free, params))
    tops = [top for top in (_expanded(group, previous) for group in groups) if top]
    kept = Partition()
    changed: list[frozenset[str]] = []
    below = previous.children()
    for top in tops:
        same = _unchanged(top, old_top, previous, affected)
        if same is None:
            changed.append(top)
        else:
            kept.communities.update((c.id, c) for c in previous.subtree(same, below))
    rest = Partition({i: c for i, c in previous.communities.items() if i not in kept.communities})
    made = assign_ids(drafts_under(graph, changed, params), rest)
    made.communities.update(kept.communities)
    return made


def _collapsed(
    graph: WeightedGraph, old_top: dict[str, str], free: set[str], params: LeidenParams
) -> tuple[list[tuple[str, str, float]], LeidenParams, dict[str, int]]:
    def node(key: str) -> str:
        return key if key in free else SUPER + old_top[key]

    weights: defaultdict[tuple[str, str], float] = defaultdict(float)
    for (a, b), weight in graph.weights.items():
        weights[pair(node(a), node(b))] += weight
    # A collapsed community's inner weight W would be a self-loop, which graspologic-native
    # does not count as modularity does (measured: it then merges everything). An edge of
    # weight W to a ghost node instead gives the pair the same degree (2W) and, together,
    # the same inner weight; the ghost has no other edge, so it stays with its community.
    for a, b in [e for e in weights if e[0] == e[1]]:
        weights[(a, GHOST + a[1:])] = weights.pop((a, b))
    edges = [(a, b, w) for (a, b), w in sorted(weights.items())]
    labels: dict[str, int] = {}
    start: dict[str, int] = {}
    for key in sorted({n for a, b, _ in edges for n in (a, b)}):
        label = key[1:] if key[0] in (SUPER, GHOST) else old_top.get(key, SUPER + key)
        start[key] = labels.setdefault(label, len(labels))
    return edges, params, start


def _expanded(group: list[str], previous: Partition) -> frozenset[str]:
    members: set[str] = set()
    for node in group:
        if node.startswith(SUPER):
            members |= previous.communities[node[1:]].members
        elif not node.startswith(GHOST):
            members.add(node)
    return frozenset(members)


def _unchanged(
    top: frozenset[str], old_top: dict[str, str], previous: Partition, affected: set[str]
) -> str | None:
    """The previous top community with exactly these members, not touched by the batch."""
    first = old_top.get(next(iter(top)))
    if first is None or first in affected:
        return None
    return first if previous.communities[first].members == top else None


__all__ = ["Community", "Partition", "rebuild", "update"]
