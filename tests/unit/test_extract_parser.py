"""The extraction output parser: both formats, every robustness rule, and property tests."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragstream.indexer.stages.extract.names import MAX_NAME_CHARS, clean_name, entity_key
from ragstream.indexer.stages.extract.parser import (
    COMPLETION_MARKER,
    ExtractionFormatError,
    ParseResult,
    format_records,
    parse_extraction,
)
from ragstream.indexer.stages.extract.records import ExtractedEntity, ExtractedRelation

CURRENT = """\
entity<|#|>Tern S3<|#|>product<|#|>A water-quality sensor launched in 2023.
entity<|#|>Kestrel Polymers<|#|>organization<|#|>Seal maker in Aberdeen.
relation<|#|>Kestrel Polymers<|#|>Tern S3<|#|>supplier, seal<|#|>Kestrel Polymers made the seal.
relation<|#|>Mira Okafor<|#|>Tern S3<|#|>design<|#|>Mira Okafor's team designed it.<|#|>0.8
<|COMPLETE|>"""

LEGACY = """\
("entity"<|>"Alex"<|>"person"<|>"Alex is an engineer.")##
("entity"<|>"TechCorp"<|>"organization"<|>"A company.")##
("relationship"<|>"Alex"<|>"TechCorp"<|>"Alex works at TechCorp."<|>"employment, work"<|>8)##
("content_keywords"<|>"work, careers")
<|COMPLETE|>"""


def test_current_format() -> None:
    result = parse_extraction(CURRENT)
    assert result.entities == (
        ExtractedEntity("Tern S3", "product", "A water-quality sensor launched in 2023."),
        ExtractedEntity("Kestrel Polymers", "organization", "Seal maker in Aberdeen."),
    )
    assert result.relations == (
        ExtractedRelation(
            "Kestrel Polymers", "Tern S3", "supplier, seal", "Kestrel Polymers made the seal."
        ),
        ExtractedRelation(
            "Mira Okafor", "Tern S3", "design", "Mira Okafor's team designed it.", 0.8
        ),
    )
    assert result.complete
    assert result.warnings == ()


def test_legacy_format_reads_description_before_keywords() -> None:
    result = parse_extraction(LEGACY)
    assert [e.name for e in result.entities] == ["Alex", "TechCorp"]
    assert result.entities[0] == ExtractedEntity("Alex", "person", "Alex is an engineer.")
    assert result.relations == (
        ExtractedRelation("Alex", "TechCorp", "employment, work", "Alex works at TechCorp.", 8.0),
    )
    assert result.warnings == ()


def test_legacy_records_on_one_line_and_glued_without_separator() -> None:
    text = (
        '("entity"<|>"A"<|>"person"<|>"First.")##("entity"<|>"B"<|>"person"<|>"Second.")'
        '("relationship"<|>"A"<|>"B"<|>"They met."<|>5)<|COMPLETE|>'
    )
    result = parse_extraction(text)
    assert [e.name for e in result.entities] == ["A", "B"]
    assert result.relations == (ExtractedRelation("A", "B", "", "They met.", 5.0),)


def test_relationship_is_read_as_relation() -> None:
    result = parse_extraction("relationship<|#|>A<|#|>B<|#|>k<|#|>d\n<|COMPLETE|>")
    assert result.relations == (ExtractedRelation("A", "B", "k", "d"),)


def test_glued_records_are_split_again() -> None:
    text = (
        "entity<|#|>A<|#|>person<|#|>First one.entity<|#|>B<|#|>person<|#|>Second one."
        "<|#|>relation<|#|>A<|#|>B<|#|>met<|#|>They met.<|#|>0.5 relation<|#|>B<|#|>C"
        "<|#|>knows<|#|>B knows C.\n<|COMPLETE|>"
    )
    result = parse_extraction(text)
    assert result.entities == (
        ExtractedEntity("A", "person", "First one."),
        ExtractedEntity("B", "person", "Second one."),
    )
    assert result.relations == (
        ExtractedRelation("A", "B", "met", "They met.", 0.5),
        ExtractedRelation("B", "C", "knows", "B knows C."),
    )


def test_a_description_ending_in_a_record_word_is_not_split() -> None:
    text = "relation<|#|>A<|#|>B<|#|>k<|#|>A is a legal entity<|#|>2\n<|COMPLETE|>"
    result = parse_extraction(text)
    assert result.relations == (ExtractedRelation("A", "B", "k", "A is a legal entity", 2.0),)


def test_quotes_are_stripped() -> None:
    text = 'entity<|#|>"Lena Voss"<|#|>"Person"<|#|>"Vice president of quality."\n<|COMPLETE|>'
    result = parse_extraction(text)
    assert result.entities == (
        ExtractedEntity("Lena Voss", "person", "Vice president of quality."),
    )


def test_self_loops_are_dropped_with_a_warning() -> None:
    text = "relation<|#|>Tern S3<|#|>tern  s3<|#|>k<|#|>itself\nrelation<|#|>A<|#|>B<|#|>k<|#|>d"
    result = parse_extraction(text + "\n<|COMPLETE|>")
    assert result.relations == (ExtractedRelation("A", "B", "k", "d"),)
    assert any("itself" in warning for warning in result.warnings)


def test_full_width_commas_in_keywords_are_normalized() -> None:
    text = "relation<|#|>A<|#|>B<|#|>合作，收购、 Supply ,supply<|#|>d\n<|COMPLETE|>"
    assert parse_extraction(text).relations[0].keywords == "合作, 收购, Supply"


@pytest.mark.parametrize("char", list("'()<>|/\\"))
def test_entity_types_with_markup_drop_the_record(char: str) -> None:
    text = f"entity<|#|>A<|#|>per{char}son<|#|>d\nentity<|#|>B<|#|>person<|#|>d\n<|COMPLETE|>"
    result = parse_extraction(text)
    assert [e.name for e in result.entities] == ["B"]
    assert any("invalid type" in warning for warning in result.warnings)


def test_an_empty_type_becomes_unknown() -> None:
    result = parse_extraction("entity<|#|>A<|#|><|#|>d\n<|COMPLETE|>")
    assert result.entities == (ExtractedEntity("A", "unknown", "d"),)


def test_names_are_truncated() -> None:
    long_name = "N" * 600
    text = f"entity<|#|>{long_name}<|#|>concept<|#|>d\nrelation<|#|>{long_name}<|#|>B<|#|>k<|#|>d"
    result = parse_extraction(text + "\n<|COMPLETE|>")
    assert result.entities[0].name == "N" * MAX_NAME_CHARS
    assert result.relations[0].source == "N" * MAX_NAME_CHARS


def test_a_missing_end_marker_is_a_warning_not_a_failure() -> None:
    result = parse_extraction("entity<|#|>A<|#|>person<|#|>d")
    assert result.entities == (ExtractedEntity("A", "person", "d"),)
    assert not result.complete
    assert any(COMPLETION_MARKER in warning for warning in result.warnings)


def test_records_after_the_end_marker_are_ignored() -> None:
    result = parse_extraction(
        "entity<|#|>A<|#|>person<|#|>d\n<|COMPLETE|>\nentity<|#|>B<|#|>x<|#|>y"
    )
    assert [e.name for e in result.entities] == ["A"]


def test_bullets_numbering_fences_and_chatter() -> None:
    text = (
        "Here are the records:\n```\n- entity<|#|>A<|#|>person<|#|>d\n"
        "2. entity<|#|>B<|#|>person<|#|>d\n```\n<|complete|>"
    )
    result = parse_extraction(text)
    assert [e.name for e in result.entities] == ["A", "B"]
    assert result.complete
    assert any("not a record" in warning for warning in result.warnings)


def test_malformed_records_are_dropped_with_warnings() -> None:
    text = "entity<|#|>A\nrelation<|#|>A<|#|>B\nthing<|#|>x<|#|>y\nentity<|#|>C<|#|>t<|#|>d"
    result = parse_extraction(text + "\n<|COMPLETE|>")
    assert [e.name for e in result.entities] == ["C"]
    assert result.relations == ()
    assert len(result.warnings) == 3


def test_a_bad_weight_becomes_the_default() -> None:
    result = parse_extraction("relation<|#|>A<|#|>B<|#|>k<|#|>d<|#|>-3\n<|COMPLETE|>")
    assert result.relations[0].weight == 1.0
    assert any("weight" in warning for warning in result.warnings)


@pytest.mark.parametrize(
    "text", ["", "   \n ", "I cannot help with that.", "Sure! Entities: A, B."]
)
def test_output_without_records_or_marker_is_a_format_error(text: str) -> None:
    with pytest.raises(ExtractionFormatError, match="no records"):
        parse_extraction(text)


def test_only_the_end_marker_means_nothing_found() -> None:
    result = parse_extraction("<|COMPLETE|>")
    assert (result.entities, result.relations, result.warnings) == ((), (), ())


def test_format_records_writes_the_current_format() -> None:
    text = format_records(
        [ExtractedEntity("A", "person", "line one\nline two")],
        [ExtractedRelation("A", "B", "k", "d"), ExtractedRelation("A", "C", "k", "d", 2.5)],
    )
    assert text.splitlines() == [
        "entity<|#|>A<|#|>person<|#|>line one line two",
        "relation<|#|>A<|#|>B<|#|>k<|#|>d",
        "relation<|#|>A<|#|>C<|#|>k<|#|>d<|#|>2.5",
        "<|COMPLETE|>",
    ]


def test_format_records_refuses_delimiters_inside_fields() -> None:
    with pytest.raises(ValueError, match="cannot contain"):
        format_records([ExtractedEntity("A<|#|>B", "person", "d")], [])
    with pytest.raises(ValueError, match="cannot contain"):
        format_records([ExtractedEntity("A", "person", "ends <|COMPLETE|> here")], [])


# Property tests.

_PIECES = st.sampled_from(
    [
        "entity",
        "relation",
        "relationship",
        '"entity"',
        "<|#|>",
        "<|>",
        "##",
        "(",
        ")",
        '"',
        "'",
        "\n",
        "\r\n",
        "<|COMPLETE|>",
        "<|complete|>",
        "，",
        "、",
        "0.5",
        "-1",
        "nan",
        "1e999",
        "content_keywords",
        "```",
        "- ",
        "1. ",
        " ",
        "A",
        "b c",
        "中文",
        "\\",
        "\u2028",
        "\x85",
    ]
)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(), st.lists(_PIECES, max_size=40).map("".join)))
def test_any_text_parses_or_raises_the_format_error(text: str) -> None:
    try:
        result = parse_extraction(text)
    except ExtractionFormatError:
        return
    assert isinstance(result, ParseResult)
    for entity in result.entities:
        assert entity.name and len(entity.name) <= MAX_NAME_CHARS
    for relation in result.relations:
        assert entity_key(relation.source) != entity_key(relation.target)
        assert relation.weight >= 0


_QUOTE_PAIRS = {('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("「", "」")}
_CHARS = st.one_of(
    st.sampled_from(list("\"'\\ -,.()[]#*中文名東京Ωжé—")),
    st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp")),
)


def _field(text: str) -> bool:
    """Text a record field holds unchanged: no delimiter or marker, stripped, not quoted."""
    wrapped = len(text) >= 2 and (text[0], text[-1]) in _QUOTE_PAIRS
    return "<|" not in text and text == text.strip() and not wrapped


_NAMES = st.text(_CHARS, min_size=1, max_size=30).filter(
    lambda name: clean_name(name) == name and _field(name)
)
_DESCRIPTIONS = st.text(_CHARS, max_size=60).filter(_field)
# A relation needs its description: a record cut off after the names is dropped.
_RELATION_DESCRIPTIONS = st.text(_CHARS, min_size=1, max_size=60).filter(_field)
_KEYWORD = st.text(_CHARS, min_size=1, max_size=12).filter(
    lambda k: _field(k) and not any(c in k for c in ",，、") and bool(k)
)
_TYPES = st.sampled_from(["person", "organization", "location", "人物", "natural_object"])


@st.composite
def _records(draw: st.DrawFn) -> tuple[list[ExtractedEntity], list[ExtractedRelation]]:
    names = draw(st.lists(_NAMES, min_size=2, max_size=5, unique_by=entity_key))
    entities = [ExtractedEntity(n, draw(_TYPES), draw(_DESCRIPTIONS)) for n in names]
    relations = []
    for source, target in itertools.pairwise(names):
        keywords = draw(st.lists(_KEYWORD, max_size=3, unique_by=str.casefold))
        weight = draw(st.sampled_from([1.0, 0.25, 7.0, 1e-3]))
        relations.append(
            ExtractedRelation(
                source, target, ", ".join(keywords), draw(_RELATION_DESCRIPTIONS), weight
            )
        )
    return entities, relations


@settings(
    max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(_records())
def test_format_then_parse_round_trips(
    records: tuple[list[ExtractedEntity], list[ExtractedRelation]],
) -> None:
    entities, relations = records
    result = parse_extraction(format_records(entities, relations))
    assert list(result.entities) == entities
    assert list(result.relations) == relations
    assert result.warnings == ()


@pytest.mark.parametrize(
    "name",
    ['Say "Hi" Inc', "back\\slash", "O'Brien & Sons", "东海海洋感知研究所", "Москва", "Ωmega (v2)"],
)
def test_names_with_quotes_backslashes_and_other_scripts_round_trip(name: str) -> None:
    entities = [ExtractedEntity(name, "organization", 'quoted "inside" \\ too')]
    relations = [ExtractedRelation(name, "Other", "a, b", "desc")]
    result = parse_extraction(format_records(entities, relations))
    assert list(result.entities) == entities
    assert list(result.relations) == relations
