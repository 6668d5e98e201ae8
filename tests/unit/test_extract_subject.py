"""The type an encyclopedic passage's first sentence gives its subject."""

from __future__ import annotations

import pytest

from ragstream.indexer.stages.extract.nlp_extractor import extract_offline
from ragstream.indexer.stages.extract.nlp_subject import subject_type


@pytest.mark.parametrize(
    ("definition", "kind"),
    [
        ("Gregory George Teu (born 3 February 1951) is a Tanzanian CCM politician.", "person"),
        ("Ælfwine (c. 661–679) was the King of Deira from 670 to 679.", "person"),
        ("Muiredach Ua hÉnlainge was a Bishop of Clonfert who died in 1117.", "person"),
        ("The Mission is a 1986 British period drama film about a Jesuit.", "product"),
        ("PNG Air is an airline based at Jacksons International Airport.", "organization"),
        ("Redmond is a town in Sevier County, Utah, United States.", "location"),
        ("The Crimean War was a military conflict fought from 1853 to 1856.", None),
        ("Evening is the period of time at the end of the day.", None),
    ],
)
def test_the_head_noun_of_the_definition_types_the_subject(
    definition: str, kind: str | None
) -> None:
    assert subject_type(definition) == kind


def test_the_title_line_is_typed_by_its_definition_on_the_rules_alone() -> None:
    text = "Gregory Teu\n\nGregory George Teu (born 3 February 1951) is a Tanzanian politician."
    types = {e.name: e.type for e in extract_offline(text).entities}
    assert types["Gregory Teu"] == "person"
