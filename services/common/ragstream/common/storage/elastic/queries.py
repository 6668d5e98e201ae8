"""Query DSL for the search store, as pure functions of the request.

Every filter goes inside the search: in the `filter` of the BM25 bool query, and in the
`filter` of the kNN clause, where Elasticsearch applies it while walking the HNSW graph
(pre-filtering). A filtered search therefore returns the best allowed records, never the
allowed part of an unfiltered top-k.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragstream.common.models import SearchFilter, Vector
from ragstream.common.storage.elastic.codec import metadata_pair

MAX_CANDIDATES = 10_000
"""Elasticsearch's upper bound for `num_candidates`."""
CANDIDATE_FACTOR = 4
MIN_CANDIDATES = 100
"""num_candidates = max(MIN_CANDIDATES, CANDIDATE_FACTOR x k): the HNSW beam per shard.
Measured recall@50 against exact search: with all-MiniLM-L6-v2 vectors (SciFact, 5.2k
chunks) 0.996 at num_candidates = k, 0.999 at 2k, 1.000 at 4k; with the hash embedder's
sparse, near-orthogonal vectors (tests/bench/bench_search_stores.py, the worst case for
int8) 0.84 at 4k and 0.91 at 8k for 10k chunks, 0.62 and 0.69 for 100k. 4k keeps semantic
vectors exact at a latency close to the minimum."""
RESCORE_OVERSAMPLE = 2.0
"""The int8 graph ranks 2k candidates; their float vectors pick the final k."""


def filter_clauses(
    workspace: str, search_filter: SearchFilter, doc_field: str = "doc_ids"
) -> list[dict[str, Any]]:
    """The workspace first, then each condition of the filter (all must hold); a record
    without a timestamp never satisfies a time bound."""
    clauses: list[dict[str, Any]] = [{"term": {"workspace": workspace}}]
    for key, value in sorted(search_filter.metadata.items()):
        clauses.append({"term": {"metadata_kv": metadata_pair(key, value)}})
    if search_filter.doc_ids is not None:
        # An empty terms list matches no document: a filter that allows nothing stays so.
        clauses.append({"terms": {doc_field: sorted(search_filter.doc_ids)}})
    bounds: dict[str, float] = {}
    if search_filter.time_from is not None:
        bounds["gte"] = float(search_filter.time_from)
    if search_filter.time_to is not None:
        bounds["lt"] = float(search_filter.time_to)
    if bounds:
        clauses.append({"range": {"timestamp": bounds}})
    return clauses


def bm25_query(workspace: str, terms: Sequence[str], search_filter: SearchFilter) -> dict[str, Any]:
    """Any of the terms (one `term` clause each: never parsed, never re-analyzed), BM25-scored;
    the filters do not score."""
    return {
        "bool": {
            "filter": filter_clauses(workspace, search_filter),
            "should": [{"term": {"terms": term}} for term in terms],
            "minimum_should_match": 1,
        }
    }


def ids_query(workspace: str, ids: Sequence[str], search_filter: SearchFilter) -> dict[str, Any]:
    """The records of the workspace with these ids that the filter allows; nothing scored."""
    clauses = [*filter_clauses(workspace, search_filter), {"terms": {"id": list(ids)}}]
    return {"bool": {"filter": clauses}}


def num_candidates(k: int) -> int:
    return min(MAX_CANDIDATES, max(MIN_CANDIDATES, CANDIDATE_FACTOR * k))


def knn_clause(
    workspace: str, vector: Vector, search_filter: SearchFilter, k: int
) -> dict[str, Any]:
    """Top-k by dot product (vectors are unit length) among the records the filter allows;
    k is capped so that the oversampled k stays within Elasticsearch's candidate limit."""
    k = min(k, int(MAX_CANDIDATES / RESCORE_OVERSAMPLE))
    return {
        "field": "vector",
        "query_vector": [float(x) for x in vector],
        "k": k,
        "num_candidates": num_candidates(k),
        "filter": filter_clauses(workspace, search_filter),
        "rescore_vector": {"oversample": RESCORE_OVERSAMPLE},
    }
