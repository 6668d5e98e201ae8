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
        # The last head noun of the first phrase holding one, not the first head noun.
        ("John Farrow (10 February 190427 January 1963) was an American film director.", "person"),
        ("Lumen is an American film production company based in Los Angeles.", "organization"),
        ("Reginald of Piperno was an Italian Dominican, theologian and companion.", "person"),
        ("KWFS-FM is a radio station serving the Wichita Falls area.", "organization"),
        (
            "The Hébertists were a political group associated with the journalist Hébert.",
            "organization",
        ),
        # A life span after a name with initials, or after a semicolon.
        ("John R. Smight( March 9, 1925 – September 1, 2003) was an American director.", "person"),
        ("Tang Baiqiao (; born 11 August 1967, Yongzhou) is a Chinese dissident.", "person"),
        # A member of an assembly or a house is a person; the Nth member of a union is not.
        ("Fred H. Frank was a member of the Wisconsin State Assembly.", "person"),
        ("South Sudan is the 193rd member of the United Nations.", None),
        # A clause after the definition defines nothing ("his native country"); nor does a
        # head noun that ends a name inside the phrase ("United States").
        (
            "Arnoud Eugène van der Biesen (December 28, 1899 Semarang, Dutch East Indies) was"
            " a sailor from the Netherlands, who represented his native country.",
            "person",
        ),
        ("Ross was a Scot from Leith, who founded a company in the city.", "person"),
        ("Schwarzenegger is a dual Austrian/United States citizen.", None),
        ("Bowie is a city in the United States of America.", "location"),
        # No head noun of its own: a place the rest of the sentence names, and nothing else.
        ("Mound Bottom is a prehistoric Native American complex in Cheatham County.", "location"),
        ("The Piri Reis map is a world map compiled by the Ottoman admiral Piri Reis.", None),
        ("Hicks Ridge is a rugged ridge located in the Explorers Range.", "location"),
        # A place made an adjective, a title holding a head noun, and what a phrase after
        # the noun is about.
        ("Jeff Jimerson is a Pittsburgh - based singer, best known as an anthem singer.", "person"),
        ("Otto von Habsburg was the last Crown Prince of Austria-Hungary.", "person"),
        ("Lo Scolaro was a weekly magazine dedicated to school children.", "product"),
        ("Fahrelnissa Zeid was a Turkish artist best known for her abstract paintings.", "person"),
        ("Nature Physics is a monthly, peer reviewed, scientific journal.", "product"),
        ("Myn M. Hoffman was the fourth Superintendent of the United States Navy.", "person"),
        ("Abraham Van Helsing is a fictional character from the novel Dracula.", "person"),
        (
            "The Enola Gay is a Boeing B-29 Superfortress bomber, named for Enola Gay Tibbets,"
            " the mother of the pilot.",
            "product",
        ),
        ("NJAES is an entity operated by Rutgers, The State University of New Jersey.", None),
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


def test_a_title_line_with_its_own_punctuation_is_one_name_typed_by_its_definition() -> None:
    texts = {
        "Mr. Smith Carries On": "Mr. Smith Carries On is a 1937 British crime film.",
        "What's New, Mr. Magoo?": "What's New, Mr. Magoo? is an American animated series.",
        "Rufus Cheney Jr.": "Rufus Cheney Jr. was a member of the Wisconsin Senate.",
        "Star Wars: Ewok Adventure": "Star Wars: Ewok Adventure is a 1984 television film.",
        "It's Alive! (1974 film)": "It's Alive! is a 1974 American horror film.",
    }
    kinds = {
        "Mr. Smith Carries On": "product",
        "What's New, Mr. Magoo?": "product",
        "Rufus Cheney Jr.": "person",
        "Star Wars: Ewok Adventure": "product",
        "It's Alive!": "product",
    }
    found: dict[str, str] = {}
    for title, body in texts.items():
        found |= {e.name: e.type for e in extract_offline(f"{title}\n\n{body}").entities}
    assert {name: found.get(name) for name in kinds} == kinds
    assert "Ewok Adventure" not in found and "Smith Carries" not in found


def test_a_line_the_sentence_splitter_cut_gives_no_title() -> None:
    text = "Sgt. Disco\n\nSgt. Disco is the fifth studio album by Circus Devils."
    names = {e.name for e in extract_offline(text).entities}
    assert "Sgt." not in names
    text = "Stop! Or My Mom Will Shoot\n\nStop! Or My Mom Will Shoot is a 1992 film."
    assert "Stop!" not in {e.name for e in extract_offline(text).entities}
