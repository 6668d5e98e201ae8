"""When gleaning pays: the cheap name count and the signs of an incomplete reply."""

from __future__ import annotations

import pytest

from ragstream.indexer.stages.extract.gleaning import FAR_FEWER, candidate_names, looks_incomplete


def test_candidate_names_counts_distinct_capitalized_runs() -> None:
    text = (
        "Teutberga was a queen of Lotharingia by marriage to Lothair II. She was a daughter of "
        "Boso the Elder and sister of Hucbert, the lay abbot of St. Maurice's Abbey.\n\n"
        "The Bishop of Elmham met Lothair II in Lotharingia."
    )
    # Teutberga, Lotharingia, Lothair II, Boso, Elder, Hucbert, St, Maurice's Abbey, Bishop of
    # Elmham: "She" and "The" opening a sentence are no names, a repeat counts once, and the
    # cheap pass reads "St." as a sentence end (a generous count is what it is meant to be).
    assert candidate_names(text) == 9


def test_a_sentence_start_stopword_is_not_part_of_the_name() -> None:
    assert candidate_names("In Bergen it rained. The Tern S3 sensor failed.") == 2


def test_text_without_capitals_has_no_candidates() -> None:
    assert candidate_names("青石港务集团与 合作，在青石港试运行自动拖轮。") == 0
    assert candidate_names("nothing here is named at all.") == 0


@pytest.mark.parametrize(
    ("complete", "cut", "entities", "candidates", "expected"),
    [
        (True, False, 10, 10, False),
        (False, False, 10, 10, True),  # no completion marker
        (True, True, 10, 10, True),  # cut at the output limit
        (True, False, 2, 2 * FAR_FEWER + 1, True),  # far fewer entities than names
        (True, False, 2, 2 * FAR_FEWER, False),
        (True, False, 0, 0, False),
    ],
)
def test_looks_incomplete(
    complete: bool, cut: bool, entities: int, candidates: int, expected: bool
) -> None:
    assert looks_incomplete(complete, cut, entities, candidates) is expected
