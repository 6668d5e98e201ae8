"""Scores of a graph against gold things: type accuracy, duplicates left, wrong merges."""

from __future__ import annotations

import json

from ragstream.cli.graph_labels import DEMO_LABELS, Thing, demo_things, multihop_labels
from ragstream.cli.graph_score import StoreEntity, score
from ragstream.common.models import entity_key


def entity(name: str, kind: str, *aliases: str) -> StoreEntity:
    return StoreEntity(entity_key(name), name, kind, aliases)


def test_types_duplicates_and_merges_are_counted_per_gold_name() -> None:
    things = [
        Thing("organization", ("IBM", "International Business Machines")),
        Thing("person", ("Ingrid Halvorsen",)),
        Thing("organization", ("Halvorsen Aquatics",)),
        Thing("location", ("Bergen",)),
        Thing("concept", ("Evening",)),
    ]
    store = [
        entity("IBM", "organization"),
        entity("International Business Machines", "concept"),
        entity("Ingrid Halvorsen", "person", "Halvorsen Aquatics"),  # a wrong merge
        entity("Evening", "location"),
    ]
    result = score(things, store)
    assert (result.names, result.found) == (6, 5)  # Bergen is missing
    # Halvorsen Aquatics is found through the person's alias, typed person: wrong.
    assert (result.type_correct, result.typed) == (2, 4)
    assert result.per_type["organization"] == (1, 3)
    assert result.confusions[("organization", "person")] == 1
    assert (result.gold_pairs, result.pairs_found, result.duplicate_pairs) == (1, 1, 1)
    assert (result.merges, result.wrong_merges) == (1, 1)
    assert result.wrong_merge_share == 1.0


def test_a_resolved_entity_answers_for_its_aliases() -> None:
    things = [Thing("organization", ("IBM", "International Business Machines", "IBM Corp."))]
    result = score(things, [entity("IBM", "organization", "International Business Machines")])
    assert (result.found, result.pairs_found, result.duplicate_pairs) == (2, 1, 0)
    assert (result.merges, result.wrong_merges, result.type_accuracy) == (1, 0, 1.0)


def test_the_label_files_hold_what_the_evaluation_promises() -> None:
    things = demo_things()
    names = [name for thing in things for name in thing.names]
    assert len(names) == len(set(names)) == 87
    assert {thing.type for thing in things} == {
        "person", "organization", "location", "product", "event",
    }  # fmt: skip
    labels = multihop_labels()
    assert sum(len(docs) for docs in labels.docs.values()) == len(labels.things) == 200
    assert json.loads(DEMO_LABELS.read_text(encoding="utf-8"))["about"]
