"""Reciprocal rank fusion (Cormack, Clarke and Buettcher, SIGIR 2009).

score(d) = sum over rankings r containing d of 1 / (k + rank_r(d)), ranks starting at 1.
Only ranks are used, so BM25 scores and cosine similarities need no calibration against
each other. k damps the weight of the very top ranks: with k = 60 (the paper's value, and
LightRAG's and Elasticsearch's default) rank 1 scores 1/61 and rank 10 scores 1/70, so a
document found fairly high by both searches beats one found first by only one of them.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

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
