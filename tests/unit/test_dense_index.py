"""DenseIndex.search_many: the results of `search`, query by query, to the bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragstream.common.storage.sqlite.dense import DenseIndex, rounding

DIM = 48


def unit(rows: np.ndarray) -> np.ndarray:
    out: np.ndarray = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return out


def clustered(seed: int, count: int) -> tuple[DenseIndex, np.ndarray]:
    """Rows around a few centres, some repeated exactly (names spelt alike have one vector),
    so that many rows sit near any threshold and ties occur; the queries are rows too."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((3, DIM))
    rows = centres[rng.integers(0, 3, count)] + 0.25 * rng.standard_normal((count, DIM))
    rows[count // 2 :: 7] = rows[: len(rows[count // 2 :: 7])]
    matrix = unit(rows)
    pks = rng.permutation(np.arange(1, 10 * count, 10))[:count]
    queries = matrix[rng.integers(0, count, 9)]
    return DenseIndex(DIM, pks.astype(np.int64), matrix.copy(), 0), queries


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(1, 400),
    threshold=st.floats(-0.9, 0.99),
    limit=st.integers(1, 40),
    allowed_share=st.sampled_from([None, 0.05, 0.5, 0.9]),
)
def test_many_is_each_search(
    seed: int, count: int, threshold: float, limit: int, allowed_share: float | None
) -> None:
    index, queries = clustered(seed, count)
    pks, _ = index.rows()
    allowed = None
    if allowed_share is not None:
        chosen = np.random.default_rng(seed).random(count) < allowed_share
        allowed = np.sort(pks[chosen])
    expected = [index.search(q, allowed, limit, threshold) for q in queries]
    assert index.search_many(list(queries), allowed, limit, threshold) == expected


@pytest.mark.parametrize("seed", range(5))
def test_a_threshold_equal_to_a_score_keeps_that_row(seed: int) -> None:
    """The threshold set to rows' exact scores: the one matrix product may round a score
    below it, and the row must still be found (`rounding`'s margin)."""
    index, queries = clustered(seed, 300)
    for q in queries:
        scores = [s for _, s in index.search(q, None, 300, -0.99)]
        for threshold in scores[1:40:3]:
            expected = [index.search(x, None, 300, threshold) for x in (q, queries[0])]
            found = index.search_many([q, queries[0]], None, 300, threshold)
            assert found == expected
            assert min(s for _, s in found[0]) == threshold


def test_blocks_of_queries_give_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queries split into blocks when the product would be large."""
    from ragstream.common.storage.sqlite import dense

    index, queries = clustered(3, 200)
    whole = index.search_many(list(queries), None, 10, 0.5)
    monkeypatch.setattr(dense, "_PRODUCT_CELLS", 450)  # two queries a block
    assert index.search_many(list(queries), None, 10, 0.5) == whole
    assert whole == [index.search(q, None, 10, 0.5) for q in queries]


def test_zero_rows_and_an_empty_index() -> None:
    matrix = unit(np.random.default_rng(1).standard_normal((5, DIM)))
    matrix[2] = 0.0
    index = DenseIndex(DIM, np.arange(5, dtype=np.int64), matrix.copy(), 0)
    queries = [matrix[0], matrix[1]]
    assert index.search_many(queries, None, 5, -0.5) == [
        index.search(q, None, 5, -0.5) for q in queries
    ]
    assert all(pk != 2 for found in index.search_many(queries, None, 5, -0.5) for pk, _ in found)
    empty = DenseIndex(None, np.zeros(0, dtype=np.int64), np.zeros((0, 0), np.float32), 0)
    assert empty.search_many(queries, None, 5, 0.9) == [[], []]
    nothing_allowed = np.array([99], dtype=np.int64)
    assert index.search_many(queries, nothing_allowed, 5, 0.1) == [[], []]


def test_rounding_bounds_two_products_of_unit_vectors() -> None:
    rng = np.random.default_rng(0)
    for dim in (8, 384, 1024, 3072):
        rows = unit(rng.standard_normal((300, dim)))
        q = unit(rng.standard_normal((1, dim)))[0]
        one_by_one = np.einsum("ij,j->i", rows, q)
        product = (q[None, :] @ rows.T)[0]
        exact = rows.astype(np.float64) @ q.astype(np.float64)
        assert np.abs(one_by_one - product).max() < rounding(dim)
        assert np.abs(one_by_one - exact).max() < rounding(dim) / 2


def test_the_product_leaves_numpy_blas_on_one_thread() -> None:
    """BLAS threads spinning after a product take the cores the other searches use; faiss's
    own BLAS (its k-means training) keeps its threads."""
    import faiss  # noqa: F401 - loads faiss's BLAS
    from threadpoolctl import threadpool_info  # type: ignore[import-untyped]

    def blas(package: str) -> list[int]:
        return [
            info["num_threads"]
            for info in threadpool_info()
            if info["user_api"] == "blas" and f"/{package}" in info["filepath"]
        ]

    faiss_before = blas("faiss")
    index, queries = clustered(0, 50)
    index.search_many(list(queries), None, 5, 0.5)
    assert blas("numpy.libs") == [1]
    assert blas("faiss") == faiss_before
