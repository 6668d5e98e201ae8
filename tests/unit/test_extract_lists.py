"""Names listed together take the kind most of them have (nlp_lists)."""

from __future__ import annotations

import re

from ragstream.indexer.stages.extract.nlp_lists import list_types, listed_runs

CITIES = "Marrakech|Rabat|Agadir|Oujda|Tangier|Laayoune|Casablanca"


def runs(sentence: str, names: str = CITIES) -> list[list[str]]:
    return listed_runs(sentence, list(re.finditer(names, sentence)))


def test_a_list_is_three_names_or_more_with_only_commas_and_or_or_between() -> None:
    sentence = "Flights serve Marrakech, Rabat, Agadir, Oujda, and Laayoune, and Casablanca."
    assert runs(sentence) == [["Marrakech", "Rabat", "Agadir", "Oujda", "Laayoune", "Casablanca"]]
    assert runs(
        "Games were held in St. Moritz (1948), Cortina (1956) and Oslo (1952).",
        "St. Moritz|Cortina|Oslo",
    ) == [["St. Moritz", "Cortina", "Oslo"]]
    assert runs("Marrakech and Rabat.") == []  # two names are a pair, not a list
    assert runs("Marrakech, then Rabat, Agadir and Oujda.") == [["Rabat", "Agadir", "Oujda"]]


def test_the_few_follow_the_many_unless_the_rules_typed_them() -> None:
    places = ["marrakech", "rabat", "tangier", "casablanca", "fes", "meknes"]
    run = [*places, "agadir", "laayoune", "oujda"]
    types = {key: "location" for key in places} | {
        "agadir": "concept",
        "laayoune": "organization",
        "oujda": "organization",
    }
    assert list_types([run], types, evidenced={"oujda"}) == {
        "agadir": "location",
        "laayoune": "location",
    }


def test_a_list_without_a_clear_leading_kind_changes_nothing() -> None:
    run = ["a", "b", "c", "d", "e"]
    mixed = {"a": "location", "b": "location", "c": "location", "d": "person", "e": "person"}
    assert list_types([run], mixed, evidenced=set()) == {}  # 3 of 5: under three quarters
    two = {"a": "location", "b": "location", "c": "concept", "d": "concept", "e": "concept"}
    assert list_types([run], two, evidenced=set()) == {}  # fewer than three of the kind
