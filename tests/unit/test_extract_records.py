"""Merging extraction passes: one record per entity or undirected pair, longer description wins."""

from __future__ import annotations

from ragstream.indexer.stages.extract.records import (
    ExtractedEntity,
    ExtractedRelation,
    merge_entities,
    merge_relations,
)


def test_merge_keeps_first_seen_order_and_the_longer_description() -> None:
    first = [ExtractedEntity("Tern S3", "product", "short"), ExtractedEntity("B", "person", "b")]
    second = [
        ExtractedEntity("tern  S3", "product", "a longer description"),
        ExtractedEntity("B", "organization", ""),
        ExtractedEntity("C", "person", "c"),
    ]
    merged = merge_entities(first, second)
    assert [entity.name for entity in merged] == ["tern  S3", "B", "C"]
    assert merged[0].description == "a longer description"
    assert merged[1] == ExtractedEntity("B", "person", "b")


def test_relations_merge_as_undirected_pairs() -> None:
    merged = merge_relations(
        [ExtractedRelation("A", "B", "k", "short")],
        [
            ExtractedRelation("b", "a", "k2", "the longer one"),
            ExtractedRelation("A", "C", "k", "x"),
        ],
    )
    assert merged == (
        ExtractedRelation("b", "a", "k2", "the longer one"),
        ExtractedRelation("A", "C", "k", "x"),
    )
