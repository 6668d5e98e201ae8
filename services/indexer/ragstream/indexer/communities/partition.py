"""A hierarchical partition: the record types, the sub-levels under each top community, and
community ids that stay the same while a community's membership mostly persists."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ragstream.indexer.communities.graph import WeightedGraph
from ragstream.indexer.communities.leiden import LeidenParams, leiden


@dataclass(frozen=True, slots=True)
class Community:
    id: str
    level: int
    """0 is the top (coarsest) level; level k+1 splits a level-k community over `max_size`."""
    parent: str
    """The id of the community one level up; "" at level 0."""
    members: frozenset[str]
    """Entity keys."""


@dataclass(slots=True)
class Partition:
    communities: dict[str, Community] = field(default_factory=dict)

    def level(self, level: int) -> list[Community]:
        return sorted(
            (c for c in self.communities.values() if c.level == level), key=lambda c: c.id
        )

    def top(self) -> dict[str, str]:
        """Entity key -> its level-0 community id."""
        return {m: c.id for c in self.level(0) for m in c.members}

    def children(self) -> dict[str, list[Community]]:
        below: defaultdict[str, list[Community]] = defaultdict(list)
        for community in self.communities.values():
            if community.parent:
                below[community.parent].append(community)
        return below

    def subtree(
        self, root: str, below: dict[str, list[Community]] | None = None
    ) -> list[Community]:
        """The community and every one under it; `below` is `children()`, when at hand."""
        below = self.children() if below is None else below
        out, stack = [], [self.communities[root]]
        while stack:
            community = stack.pop()
            out.append(community)
            stack.extend(below.get(community.id, []))
        return out

    def shape(self) -> set[tuple[int, frozenset[str], frozenset[str]]]:
        """The partition without its ids: (level, members, parent's members) of each
        community. Two partitions with the same shape are the same communities."""
        parents = {c.id: c.members for c in self.communities.values()}
        return {
            (c.level, c.members, parents.get(c.parent, frozenset()))
            for c in self.communities.values()
        }


@dataclass(frozen=True, slots=True)
class Draft:
    level: int
    members: frozenset[str]
    parent: int
    """Index of the parent draft in the same list; -1 at level 0."""


def split(inner: WeightedGraph, members: frozenset[str], params: LeidenParams) -> list[list[str]]:
    """The sub-communities of a community over `max_size` (none when Leiden finds it whole):
    Leiden over `inner`, its induced subgraph, edges sorted by key."""
    if len(members) <= params.max_size:
        return []
    parts = leiden(inner.sorted_edges(), params)
    covered = {m for part in parts for m in part}
    parts += [[m] for m in sorted(members - covered)]  # members with no edge inside
    return parts if len(parts) > 1 else []


def drafts_under(
    graph: WeightedGraph, tops: Iterable[Iterable[str]], params: LeidenParams
) -> list[Draft]:
    """Each top community and, recursively, the splits of every community over `max_size`.
    Each community's induced subgraph is cut from its parent's, so a level costs one pass
    over the edges."""
    drafts = [Draft(0, frozenset(top), -1) for top in tops]
    inner = _induced_each(graph, drafts)
    index = 0
    while index < len(drafts):
        draft = drafts[index]
        parts = split(inner[index], draft.members, params)
        children = [Draft(draft.level + 1, frozenset(p), index) for p in parts]
        inner += _induced_each(inner[index], children)
        drafts += children
        index += 1
    return drafts


def _induced_each(graph: WeightedGraph, drafts: list[Draft]) -> list[WeightedGraph]:
    """The subgraph induced by each of the disjoint drafts, in one pass over `graph`."""
    owner = {m: i for i, d in enumerate(drafts) for m in d.members}
    parts: list[WeightedGraph] = [WeightedGraph({}) for _ in drafts]
    for edge, weight in graph.weights.items():
        i = owner.get(edge[0], -1)
        if i >= 0 and owner.get(edge[1], -1) == i:
            parts[i].weights[edge] = weight
    return parts


def content_id(level: int, members: Iterable[str]) -> str:
    """A new community's id: a function of its level and its least member key (the
    communities of a level are disjoint, so no two share it). A rebuild from nothing names
    the same communities the same way whatever order the events came in, and a community
    keeps its id through changes of membership that keep its least member."""
    return _hashed(f"{level}\n{min(members)}")


def assign_ids(drafts: list[Draft], previous: Partition, keep: float = 0.5) -> Partition:
    """Ids for the drafts: a previous community's id passes to the draft at the same level
    that overlaps it most, when their Jaccard similarity is at least `keep` (each id once,
    the largest overlaps first); every other draft gets its `content_id`."""
    ids: list[str] = [""] * len(drafts)
    for level in sorted({d.level for d in drafts}):
        chosen = [i for i, d in enumerate(drafts) if d.level == level]
        for i, old in _matches(drafts, chosen, previous.level(level), keep).items():
            ids[i] = old
        taken = set(ids)
        for i in chosen:
            if not ids[i]:
                new = content_id(level, drafts[i].members)
                ids[i] = new if new not in taken else _unique(level, drafts[i].members)
                taken.add(ids[i])
    out = Partition()
    for i, d in enumerate(drafts):
        parent = ids[d.parent] if d.parent >= 0 else ""
        out.communities[ids[i]] = Community(ids[i], d.level, parent, d.members)
    return out


def _unique(level: int, members: Iterable[str]) -> str:
    """An id for a draft whose least member names a community that kept an older id."""
    return _hashed(f"{level}\n" + "\n".join(sorted(members)))


def _hashed(text: str) -> str:
    return "c" + hashlib.sha256(text.encode()).hexdigest()[:12]


def _matches(
    drafts: list[Draft], chosen: list[int], olds: list[Community], keep: float
) -> dict[int, str]:
    owner = {m: c.id for c in olds for m in c.members}
    sizes = {c.id: len(c.members) for c in olds}
    candidates: list[tuple[float, str, int]] = []
    for i in chosen:
        overlap: defaultdict[str, int] = defaultdict(int)
        for member in drafts[i].members:
            if member in owner:
                overlap[owner[member]] += 1
        for old, shared in overlap.items():
            jaccard = shared / (len(drafts[i].members) + sizes[old] - shared)
            if jaccard >= keep:
                candidates.append((-jaccard, old, i))
    matched: dict[int, str] = {}
    used: set[str] = set()
    for _, old, i in sorted(candidates):
        if old not in used and i not in matched:
            matched[i], used = old, used | {old}
    return matched
