"""Dynamic community selection: the top level by score and rating, descending where a
child scores higher than its parent; map replies parsed into rated points."""

from __future__ import annotations

from ragstream.common.communities import CommunityRecord, Report
from ragstream.query.community_search import findings_answer, parse_points
from ragstream.query.community_selection import select


def record(id_: str, level: int = 0, parent: str = "", rating: float = 5.0) -> CommunityRecord:
    report = Report(f"title {id_}", "summary", (), rating, "", "k", "extractive")
    return CommunityRecord("ws", id_, level, parent, (id_,), report)


RECORDS = [
    record("a", rating=9.0),
    record("b", rating=2.0),
    record("c", rating=5.0),
    record("a1", 1, "a"),
    record("a2", 1, "a"),
    CommunityRecord("ws", "d", 0, "", ("d",), None),  # no report yet: never chosen
]


def ids(records: list[CommunityRecord]) -> list[str]:
    return [r.id for r in records]


def test_with_no_search_match_the_top_level_is_read_by_rating() -> None:
    assert ids(select(RECORDS, {}, 10)) == ["a", "c", "b"]
    assert ids(select(RECORDS, {}, 2)) == ["a", "c"]


def test_a_matching_child_takes_its_parents_place() -> None:
    scores = {"a": 0.2, "a2": 0.5, "b": 0.3}
    assert ids(select(RECORDS, scores, 10)) == ["a2", "b", "c"]


def test_a_child_scoring_below_its_parent_is_not_descended_into() -> None:
    assert ids(select(RECORDS, {"a": 0.5, "a1": 0.4}, 1)) == ["a"]


def test_map_replies_become_rated_points() -> None:
    reply = 'Sure: {"points": [{"description": "Seals fail", "score": 80}, ' + (
        '{"description": "", "score": 90}, {"description": "Noise", "score": 0}]}'
    )
    points = parse_points(reply, "a")
    assert [(p.community_id, p.text, p.score) for p in points] == [("a", "Seals fail", 80.0)]
    assert parse_points("no json here", "a") == []


def test_the_offline_answer_cites_each_report() -> None:
    answer = findings_answer(RECORDS[:2], 1000)
    assert "## title a [Data: Reports (a)]" in answer and "[Data: Reports (b)]" in answer
    assert findings_answer([], 1000).startswith("No community reports")
