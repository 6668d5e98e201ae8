"""Pure stages of graph indexing and graph retrieval."""

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from ragstream.common.derive import merge, needs_summary, truncated
from ragstream.common.models import Chunk, GraphEdge, Mention, MentionKind, relation_key
from ragstream.indexer.stages.extract.mentions import to_mentions
from ragstream.query.fusion import round_robin
from ragstream.query.stages.budget import fit
from ragstream.query.stages.graph import rank_edges
from ragstream.query.stages.keywords import offline_keywords, parse_keywords
from ragstream.query.stages.pick import pick_by_weight

CHUNK = Chunk("c1", "ws", "d1", "text", 10, 0, "d1.md")


@dataclass
class E:
    name: str
    type: str
    description: str


@dataclass
class R:
    source: str
    target: str
    keywords: str
    description: str
    weight: float = 1.0


def key(name: str) -> str:
    return " ".join(name.split()).casefold()


def test_mentions_keep_the_longer_description_and_add_missing_endpoints() -> None:
    mentions = to_mentions(
        CHUNK,
        [E("Mira Okafor", "person", "leads"), E("mira  okafor", "person", "leads the Tern team")],
        [R("Mira Okafor", "Tern S3", "leads", "Mira leads Tern S3"), R("X", "x", "self", "loop")],
        key,
    )
    by_key = {m.key: m for m in mentions}
    assert by_key["mira okafor"].description == "leads the Tern team"
    assert by_key["tern s3"].type == "unknown"  # endpoint added from the relation
    rel = by_key[relation_key("tern s3", "mira okafor")]
    assert (rel.source, rel.target, rel.kind) == ("mira okafor", "tern s3", MentionKind.RELATION)
    assert "x" not in by_key  # self-loops dropped, and their endpoints with them
    assert all(m.chunk_id == "c1" and m.doc_id == "d1" for m in mentions)


def mention(
    chunk: str, description: str, type_: str = "person", doc: str = "d1", name: str = "Mira"
) -> Mention:
    return Mention(
        "ws", chunk, doc, MentionKind.ENTITY, "mira", name=name, type=type_, description=description
    )


def test_merge_votes_type_and_name_and_dedupes_fragments_in_chunk_order() -> None:
    draft = merge(
        "mira",
        [
            mention("c3", "b", "organization", "d2"),
            mention("c1", "a", name="MIRA"),
            mention("c2", "a", "person", "d2"),
            mention("c4", "c", "unknown"),
        ],
    )
    assert draft.type == "person"
    assert draft.fragments == ("a", "b", "c")
    assert draft.doc_ids == ("d1", "d2")
    assert draft.chunk_ids == ("c1", "c2", "c3", "c4")


def test_summary_threshold_and_offline_truncation() -> None:
    assert not needs_summary(["x"] * 8, 8, 1200)
    assert needs_summary(["x"] * 9, 8, 1200)
    assert needs_summary(["word " * 1300], 8, 1200)
    assert truncated(["one two", "three four", "five six"], 4) == "one two\nthree four"


def test_round_robin_and_weight_pick() -> None:
    assert round_robin([["a", "b", "c"], ["b", "d"], []]) == ["a", "b", "c", "d"]
    # The second source's top item is taken: it gives its next one in the same turn.
    assert round_robin([["a", "b", "c"], ["a", "d"]]) == ["a", "d", "b", "c"]
    picked = pick_by_weight([["c1", "c2", "c3"], ["c3", "c4"], ["c3", "c2"]], per_item=2)
    assert picked == [["c3", "c2"], ["c3", "c4"], ["c3", "c2"]]


def test_keywords_from_the_model_are_repaired_or_empty() -> None:
    reply = (
        "Sure!\n```json\n"
        '{"high_level_keywords": ["recalls",], "low_level_keywords": ["Tern S3"]}\n```'
    )
    parsed = parse_keywords(reply)
    assert parsed.high == ("recalls",) and parsed.low == ("Tern S3",)
    assert parse_keywords("no json here").high == ()
    assert parse_keywords('{"high_level_keywords": "not a list"}').high == ()


def test_offline_keywords_prefer_entity_names_in_the_question() -> None:
    found = offline_keywords("Who made the Tern S3 seal?", ["Tern S3", "Tern", "Skua 3"])
    assert found.low == ("Tern S3",)
    assert "seal" in found.high and "the" not in found.high
    question = "What is the place of birth of Lothair Ii's husband?"
    found = offline_keywords(question, ["Place", "US", "Lothair II", "Lothair"])
    assert found.low == ("Lothair II",)  # not "us" inside "husband", nor "place" in lowercase


@given(
    st.lists(st.integers(min_value=0, max_value=500), max_size=40),
    st.integers(min_value=0, max_value=3000),
)
def test_no_budget_is_ever_exceeded(costs: list[int], budget: int) -> None:
    kept = fit(costs, lambda c: c, budget)
    assert sum(kept) <= budget
    assert kept == costs[: len(kept)]
    if len(kept) < len(costs):
        assert sum(kept) + costs[len(kept)] > budget


def test_edges_of_the_best_found_entity_come_before_hub_edges() -> None:
    def edge(a: str, b: str, weight: float = 1.0) -> GraphEdge:
        return GraphEdge(a, b, "", "", weight)

    hub = edge("italy", "tuscany")  # reached through "bertha", the second entity found
    named = [edge("lothair ii", "teutberga"), edge("ermengarde", "lothair ii", 3.0)]
    degrees = {"italy": 90, "tuscany": 40, "lothair ii": 6, "teutberga": 3, "ermengarde": 2}
    ranked = rank_edges([hub, *named, named[0]], degrees, ["lothair ii", "bertha"])
    assert [e.key for e, _ in ranked] == [named[0].key, named[1].key, hub.key]
    assert [score for _, score in ranked] == [9.0, 8.0, 130.0]
    # Without found entities the order is LightRAG's: degree sum, then weight.
    assert next(e.key for e, _ in rank_edges([*named, hub], degrees)) == hub.key
