from hypothesis import given
from hypothesis import strategies as st

from ragstream.query.fusion import reciprocal_rank_fusion


def test_item_found_by_both_rankings_beats_single_top_hit() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["d", "b", "a"]], k=60)
    assert [item for item, _ in fused] == ["a", "b", "d", "c"]
    scores = dict(fused)
    assert scores["b"] == 1 / 62 + 1 / 62
    assert scores["a"] == 1 / 61 + 1 / 63
    assert scores["d"] == 1 / 61
    assert scores["a"] > scores["d"]


def test_scores_follow_the_formula_with_k() -> None:
    fused = dict(reciprocal_rank_fusion([["x", "y"]], k=1))
    assert fused == {"x": 1 / 2, "y": 1 / 3}


def test_ties_keep_first_appearance_order() -> None:
    fused = reciprocal_rank_fusion([["a"], ["b"]])
    assert [item for item, _ in fused] == ["a", "b"]


@given(st.lists(st.lists(st.integers(0, 30), unique=True, max_size=20), max_size=4))
def test_fusion_is_sorted_and_covers_every_item(rankings: list[list[int]]) -> None:
    fused = reciprocal_rank_fusion(rankings)
    scores = [score for _, score in fused]
    assert scores == sorted(scores, reverse=True)
    assert {item for item, _ in fused} == {item for ranking in rankings for item in ranking}


def test_sub_query_rankings_fuse_by_rrf_and_one_ranking_stays_as_it_is() -> None:
    import numpy as np

    from ragstream.common.models import Hit, SearchRecord
    from ragstream.query.fusion import fuse_rankings

    def hits(*ids: str) -> list[Hit]:
        return [
            Hit(SearchRecord(i, "ws", i, (), np.zeros(2, dtype=np.float32), ()), 1.0) for i in ids
        ]

    question, first, second = hits("a", "b"), hits("c", "b"), hits("d", "b")
    fused = fuse_rankings([question, first, second], limit=3, rrf_k=60)
    assert [h.record.id for h in fused] == ["b", "a", "c"]  # found by all three, then ties
    assert fused[0].score == 3 / 62
    assert fuse_rankings([question], limit=1, rrf_k=60) == question
