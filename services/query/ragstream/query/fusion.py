"""How rankings combine: reciprocal rank fusion and the round-robin merge.

Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009):

score(d) = sum over rankings r containing d of 1 / (k + rank_r(d)), ranks starting at 1.
Only ranks are used, so BM25 scores and cosine similarities need no calibration against
each other. k damps the weight of the very top ranks: with k = 60 (the paper's value, and
LightRAG's and Elasticsearch's default) rank 1 scores 1/61 and rank 10 scores 1/70, so a
document found fairly high by both searches beats one found first by only one of them.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

from ragstream.common.models import Hit

T = TypeVar("T", bound=Hashable)


def reciprocal_rank_fusion(rankings: Sequence[Sequence[T]], k: int = 60) -> list[tuple[T, float]]:
    """Fused (item, score) pairs, best first; ties keep the order of first appearance."""
    if k <= 0:
        raise ValueError("k must be positive")
    scores: dict[T, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: i for i, item in enumerate(scores)}
    return sorted(scores.items(), key=lambda pair: (-pair[1], order[pair[0]]))


def round_robin(sources: Sequence[Sequence[T]]) -> list[T]:
    """One from each source in turn, each turn the source's best item not taken yet, until
    every source is used up.

    A source whose next item another source already gave contributes its next new one in
    that turn rather than nothing: when the chunk search and an entity agree on the top
    chunk, the entity's second chunk (often the passage about a related entity, the second
    hop) gets the place.
    """
    merged: dict[T, None] = {}
    positions = [0] * len(sources)
    while True:
        moved = False
        for index, source in enumerate(sources):
            position = positions[index]
            while position < len(source) and source[position] in merged:
                position += 1
            if position < len(source):
                merged[source[position]] = None
                position += 1
                moved = True
            positions[index] = position
        if not moved:
            return list(merged)


def fuse_rankings(rankings: Sequence[list[Hit]], limit: int, rrf_k: int) -> list[Hit]:
    """One ranking as it is; several (the question and its sub-queries) fused by RRF."""
    if len(rankings) == 1:
        return rankings[0]
    by_id = {hit.record.id: hit.record for ranking in rankings for hit in ranking}
    ids = [[hit.record.id for hit in ranking] for ranking in rankings]
    fused = reciprocal_rank_fusion(ids, k=rrf_k)[:limit]
    return [Hit(by_id[rid], score) for rid, score in fused]
