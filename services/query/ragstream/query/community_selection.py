"""Which community reports a corpus-wide question reads: dynamic selection from the top
level down (GraphRAG's global search selects the same way, with an LLM's rating where this
uses the reports' hybrid-search scores, so it also runs offline). Pure functions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from ragstream.common.communities import CommunityRecord


def select(
    records: Sequence[CommunityRecord], scores: Mapping[str, float], limit: int
) -> list[CommunityRecord]:
    """At most `limit` communities with reports, best first (by search score, then
    rating). The level-0 communities are
    queued by (search score, rating); the best one is taken, unless one of its children
    scores higher than it does, in which case its children take its place in the queue.
    A question about one thing so descends to the communities about it; a question about
    the whole corpus, which matches no one report best, reads the top level."""
    children: defaultdict[str, list[CommunityRecord]] = defaultdict(list)
    for record in records:
        if record.parent and record.report is not None:
            children[record.parent].append(record)

    def rank(record: CommunityRecord) -> tuple[float, float, str]:
        rating = record.report.rating if record.report else 0.0
        return (-scores.get(record.id, 0.0), -rating, record.id)

    queue = sorted((r for r in records if r.level == 0 and r.report is not None), key=rank)
    chosen: list[CommunityRecord] = []
    while queue and len(chosen) < limit:
        best = queue.pop(0)
        own = scores.get(best.id, 0.0)
        better = [c for c in children[best.id] if scores.get(c.id, 0.0) > own]
        if better:
            queue = sorted([*queue, *better], key=rank)
        else:
            chosen.append(best)
    return sorted(chosen, key=rank)
