"""Retrieval metrics as BEIR computes them (pytrec_eval conventions)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int = 10) -> float:
    """Normalized discounted cumulative gain with graded gains rel / log2(rank + 1)."""
    dcg = sum(
        relevance.get(doc, 0) / math.log2(rank + 1) for rank, doc in enumerate(ranked[:k], start=1)
    )
    ideal = sorted((r for r in relevance.values() if r > 0), reverse=True)[:k]
    idcg = sum(rel / math.log2(rank + 1) for rank, rel in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], relevance: Mapping[str, int], k: int) -> float:
    relevant = {doc for doc, rel in relevance.items() if rel > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)
