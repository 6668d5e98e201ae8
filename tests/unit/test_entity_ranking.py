"""The order SearchEntities gives what the hybrid search found for a name."""

from __future__ import annotations

from ragstream.query.entity_ranking import Candidate, names_all, rank
from ragstream.query.prompt import entity_line
from ragstream.query.types import ContextEntity


def candidate(name: str, degree: int, score: float, *aliases: str) -> Candidate:
    return Candidate(name.lower(), name, aliases, degree, score)


def test_an_exact_name_comes_first_then_the_named_by_degree_then_the_rest() -> None:
    person = candidate("Ingrid Halvorsen", 12, 0.033, "Halvorsen")
    company = candidate("Halvorsen Aquatics", 60, 0.031)
    other = candidate("Tomasz Brejcha", 40, 0.032)
    town = candidate("Halvorsen", 1, 0.001)

    assert rank("Halvorsen", [person, other, company]) == [company, person, other]
    assert rank("halvorsen", [person, other, company, town])[0] == town
    assert rank("Ingrid Halvorsen", [company, other, person])[0] == person


def test_spellings_fold_and_every_word_must_be_named() -> None:
    assert names_all(["palais", "royal"], "Palais-Royal")
    assert names_all(["izmir"], "İzmir Port")
    assert not names_all(["halvorsen", "aquatics"], "Ingrid Halvorsen")
    assert not names_all(["hal"], "Halvorsen Aquatics")  # words, not prefixes
    assert names_all(["青澜"], "青澜海洋装备")  # CJK names are not spaced
    chavez = candidate("Hugo Chávez", 3, 0.01)
    assert rank("Hugo Chavez", [candidate("Caracas", 9, 0.02), chavez])[0] == chavez


def test_no_name_match_keeps_the_retrieval_order() -> None:
    found = [candidate("Norway", 30, 0.03), candidate("Bergen", 2, 0.02)]
    assert rank("fjord towns", found) == found


def test_the_prompt_names_an_entity_s_aliases() -> None:
    ibm = ContextEntity("ibm", "IBM", "organization", "Builds mainframes.", 1.0, ("a",), ())
    assert entity_line(ibm) == "- IBM (organization): Builds mainframes."
    aliased = ContextEntity(
        "ibm", "IBM", "organization", "Builds mainframes.", 1.0, ("a",), (), ("Big Blue",)
    )
    assert entity_line(aliased) == "- IBM (organization; also named Big Blue): Builds mainframes."
