"""The offline extractor with the packaged named-entity model, and without it (the rules)."""

from __future__ import annotations

import functools
from collections import Counter

import pytest

from ragstream.cli import demo_data
from ragstream.indexer.stages.extract.names import entity_key
from ragstream.indexer.stages.extract.nlp_extractor import NLPExtractor, extract_offline
from ragstream.indexer.stages.extract.nlp_junk import junk_name
from ragstream.indexer.stages.extract.nlp_model import (
    GROUP,
    NOT_A_NAME,
    SpacyTagger,
    Tag,
    apply_votes,
    load_tagger,
    model_votes,
    not_names,
)
from ragstream.indexer.stages.extract.nlp_possessive import possessive_names
from ragstream.indexer.stages.extract.nlp_title_line import surnamed
from ragstream.indexer.stages.extract.sentences import split_sentences

CORPUS = demo_data.CORPUS


@functools.cache
def tagger() -> SpacyTagger:
    loaded = load_tagger()
    assert loaded is not None, "the named-entity model package is a pinned dependency"
    return loaded


def model_types(text: str) -> dict[str, str]:
    """Name -> type of the entities extracted from `text` with the model."""
    return {e.name: e.type for e in extract_offline(text, tagger()).entities}


def types_in(document: str, with_model: bool) -> dict[str, str]:
    text = (CORPUS / document).read_text(encoding="utf-8")
    result = extract_offline(text, tagger() if with_model else None)
    return {entity_key(e.name): e.type for e in result.entities}


def test_the_model_types_what_the_rules_leave_as_concepts() -> None:
    rules, model = types_in("company-overview.md", False), types_in("company-overview.md", True)
    assert rules[entity_key("Shanghai")] == "concept"
    for place in ("Scotland", "Norway", "China", "Shanghai"):
        assert model[entity_key(place)] == "location"
    for country in ("Scotland", "Norway", "China"):  # countries, whichever types the rest
        assert rules[entity_key(country)] == "location"
    assert rules[entity_key("Skjervik Havbruk")] == "concept"
    assert model[entity_key("Skjervik Havbruk")] == "organization"


def test_rule_evidence_wins_over_the_model() -> None:
    # The model reads "Halvorsen Aquatics" as a person as often as not; its suffix decides.
    model = types_in("company-overview.md", True)
    assert model[entity_key("Halvorsen Aquatics")] == "organization"
    assert model[entity_key("Ingrid Halvorsen")] == "person"
    assert model[entity_key("Tern S3.1")] == "product"


def test_an_airport_is_a_place_whatever_the_model_reads_in_it() -> None:
    # The small model reads "Gatwick Airport" in this sentence as a person.
    text = (
        "In June 1958, a Jersey Airlines de Havilland Heron became the first commercial"
        " airliner to arrive at the newly reconstructed Gatwick Airport."
    )
    assert [t.entity_type for t in tagger().tag([text]) if t.name == "Gatwick Airport"] == [
        "person"
    ]
    types = model_types(text)
    assert types["Gatwick Airport"] == "location"


def test_a_place_is_a_place_by_its_kind_or_bearing_around_it() -> None:
    # The small model reads Waterloo and Stafford here as people, Suvorov Glacier too.
    text = (
        "Portland lies partially in the town of Waterloo in Jefferson County. Missouri City is"
        " bordered by Houston to the north, Stafford to the northwest and Arcola to the"
        " southeast. Belousov Point lies just north of the terminus of Suvorov Glacier."
    )
    types = model_types(text)
    assert {name: types[name] for name in ("Waterloo", "Stafford", "Suvorov Glacier")} == {
        "Waterloo": "location",
        "Stafford": "location",
        "Suvorov Glacier": "location",
    }


def test_a_place_is_a_place_by_a_bearing_before_it_or_its_kind_after_it() -> None:
    # The small model reads Rongbuk as an organization; the rules gave Zealand no type.
    text = (
        "He later settled in the small village of Rude in southern Zealand. Using a wing suit,"
        " he glided down to the Rongbuk glacier more than 1,000 meters below."
    )
    types = model_types(text)
    assert (types["Zealand"], types["Rongbuk"]) == ("location", "location")


def test_an_adjective_before_a_place_s_kind_is_no_place() -> None:
    text = (
        "The road crossed the Iberian peninsula to the sea. El Paso is a Congressional"
        " district of Texas."
    )
    types = model_types(text)
    assert types.get("Iberian") != "location" and types.get("Congressional") != "location"


def test_a_year_with_its_era_is_a_concept_not_a_product() -> None:
    text = (
        "Trajan was born on 18 September 53AD in Hispania Baetica. The invasion of AD 43 began"
        " in Britain; AD 43 saw Claudius land."
    )
    types = model_types(text)
    assert types.get("53AD") == "concept" and types["AD 43"] == "concept"


def test_a_road_by_its_number_is_a_place_not_a_product() -> None:
    text = (
        "The mound is at the junction of Georgia State Route 17 and U.S. Route 1, near"
        " Interstate H-3 and the A4 Highway. The album Highway 61 Revisited came out in 1965."
    )
    types = model_types(text)
    roads = ("Georgia State Route 17", "U.S. Route 1", "Interstate H-3", "A4 Highway")
    assert {types[road] for road in roads} == {"location"}
    assert types["Highway 61 Revisited"] == "product"


def test_an_organization_or_a_gallery_is_one_by_its_last_word() -> None:
    text = (
        "Seattle has galleries, including Soil Art Gallery. They are on the World Health"
        " Organization's List of Essential Medicines."
    )
    types = model_types(text)
    assert types["Soil Art Gallery"] == "organization"
    assert types["World Health Organization"] == "organization"


def test_a_name_listed_with_others_of_one_kind_is_of_that_kind() -> None:
    text = (
        "Sabirni centar is a 1989 film directed by Goran Marković, starring Rade Marković,"
        " Bogdan Diklić, Dragan Nikolić, Aleksandar Berček and Mirjana Karanović."
    )
    sentence = split_sentences(text)[0]
    tagged = {t.name: t.entity_type for t in tagger().tag([sentence])}
    assert tagged["Mirjana Karanović"] == "organization"  # the small model's reading
    types = model_types(text)
    assert types["Mirjana Karanović"] == "person"


def test_every_person_of_the_corpus_is_a_person_with_the_model() -> None:
    people = ["Ingrid Halvorsen", "Tomasz Brejcha", "Jonas Eide", "Zhou Mingzhe", "Mira Okafor"]
    found = types_in("leadership-team.md", True)
    assert {name: found[entity_key(name)] for name in people} == dict.fromkeys(people, "person")


def test_sentence_fragments_are_never_names() -> None:
    text = "The city of Lucknow was annexed in 1850.After World War II it grew near Kanpur."
    for tagged in (None, tagger()):
        names = {e.name for e in extract_offline(text, tagged).entities}
        assert "Lucknow" in names
        assert not [name for name in names if "After" in name]
    assert junk_name("1850.After World War II") and not junk_name("J.R.R. Tolkien")
    assert not junk_name("Tern S3.1")


def test_a_lone_word_neither_rules_nor_model_type_is_dropped() -> None:
    text = "Formed in 1990, Iron Maiden toured Germany. Formed bands rarely last."
    names = {e.name for e in extract_offline(text, tagger()).entities}
    assert "Formed" not in names
    assert {"Iron Maiden", "Germany"} <= names


async def test_the_extractor_runs_the_model_on_its_worker_thread() -> None:
    text = (CORPUS / "leadership-team.md").read_text(encoding="utf-8")
    assert await NLPExtractor(tagger()).extract(text) == extract_offline(text, tagger())


def test_votes_count_per_name_and_ties_follow_the_type_priority() -> None:
    tags = [
        Tag("Gannet Fleet", "person"),
        Tag("Gannet Fleet", "organization"),
        Tag("June 2023", NOT_A_NAME),
        Tag("Bergen", "location"),
        Tag("Bergen", "location"),
        Tag("Bergen", "organization"),
    ]
    votes = model_votes(tags)
    assert votes[entity_key("Bergen")] == Counter(location=2, organization=1)
    types = {entity_key(n): "concept" for n in ("Gannet Fleet", "Bergen", "Skua")}
    typed = apply_votes(types | {"kp-70": "product"}, votes | {"kp-70": Counter(person=3)})
    assert typed[entity_key("Gannet Fleet")] == "person"  # TYPE_PRIORITY breaks the tie
    assert typed[entity_key("Bergen")] == "location"
    assert typed[entity_key("Skua")] == "concept"
    assert typed["kp-70"] == "product"  # a rule's type stands


@pytest.mark.parametrize(
    ("spelling", "evidence", "counts", "dropped"),
    [
        ("June 2023", frozenset(), Counter({NOT_A_NAME: 1}), True),
        ("Formed", frozenset(), Counter(), True),
        ("AUV", frozenset(), Counter(), False),  # an acronym is a term
        ("KP70", frozenset(), Counter(), False),
        ("Gannet Fleet", frozenset(), Counter(), False),  # two words: the rules' name stands
        ("Tern", frozenset({"product"}), Counter(), False),
        ("Bergen", frozenset(), Counter(location=1, **{NOT_A_NAME: 1}), False),
        ("Catholic", frozenset(), Counter({GROUP: 2}), True),  # a religion's adjective alone
        ("Dutch Protestants", frozenset(), Counter({GROUP: 1}), True),  # a people and a faith
        ("South Korean", frozenset(), Counter({GROUP: 3}), True),  # a qualified nationality
        ("Native Americans", frozenset(), Counter({GROUP: 1}), True),
        ("Tomas Milian", frozenset(), Counter({GROUP: 1}), False),  # a name misread
        ("Central African Republic", frozenset(), Counter({GROUP: 1}), False),  # a place
        ("Middle English", frozenset(), Counter({GROUP: 1}), False),  # a language
        ("South Korean", frozenset(), Counter({GROUP: 1, "location": 1}), False),  # named once
        ("South Korean", frozenset({"location"}), Counter({GROUP: 1}), False),  # rules typed
        ("Democratic", frozenset({"organization"}), Counter({GROUP: 1}), False),  # rules typed
        ("Socrates", frozenset(), Counter(), False),  # a name the model missed
        ("Autumn", frozenset(), Counter(), True),  # untagged, and mostly written "autumn"
        ("Autumn", frozenset(), Counter(event=1), False),  # the model names it
    ],
)
def test_names_the_model_does_not_take_for_names(
    spelling: str, evidence: frozenset[str], counts: Counter[str], dropped: bool
) -> None:
    key = entity_key(spelling)
    votes = {key: counts} if counts else {}
    assert (not_names({key: spelling}, {key: evidence}, votes) == [key]) is dropped


def test_a_lone_word_the_chunk_also_writes_in_lowercase_goes_unless_the_model_names_it() -> None:
    key = entity_key("Breaststroke")
    lowercase = {"breaststroke", "meters"}
    assert not_names({key: "Breaststroke"}, {key: frozenset()}, {}, lowercase) == [key]
    assert not_names({key: "Breaststroke"}, {key: frozenset()}, {}) == []  # a rare word
    named = {key: Counter(event=1)}
    assert not_names({key: "Breaststroke"}, {key: frozenset()}, named, lowercase) == []
    two = entity_key("Breaststroke Final")  # two words: the rules' name stands
    assert not_names({two: "Breaststroke Final"}, {two: frozenset()}, {}, lowercase) == []


def test_the_models_name_after_an_english_prefix_is_the_name_the_rules_find() -> None:
    # The model reads "post-World War II" and "non-NATO" whole; the rules find "World War II"
    # and "NATO" there: the model's types reach those names.
    tags = tagger().tag(["He served in the post-World War II era.", "It joined non-NATO states."])
    assert {"World War II", "NATO"} <= {tag.name for tag in tags}
    text = "He served in the post-World War II era. It joined the non-NATO states."
    types = model_types(text)
    assert types["World War II"] == "event"
    assert types["NATO"] == "organization"


def test_the_models_name_without_an_infobox_label_is_the_name_the_rules_find() -> None:
    text = "Selma Director Ava DuVernay Starring David Oyelowo Released 2014 Genre Drama."
    assert "Starring David Oyelowo" not in {tag.name for tag in tagger().tag([text])}
    types = model_types(text)
    assert types["David Oyelowo"] == "person"


def test_a_lone_word_the_chunk_writes_mostly_in_lowercase_goes_whatever_the_model_says() -> None:
    # The model reads the one capitalized "Sarsuela" as a person; the chunk writes the genre
    # in lowercase three times. "Imperial" and "Euro" likewise; "Time", quoted, is a title.
    text = (
        "Atang de la Rama was hailed Queen of the Kundiman and of the Sarsuela in 1979. She "
        "starred in the sarsuela Dalagang Bukid. The sarsuela is a musical play. She brought "
        "the sarsuela to Luzon. Later, his uncle Johann Wilhelm lost the Imperial favour and "
        "stayed an imperial prisoner in an imperial fortress. Growth was above the average for "
        'the Euro area. Belgium switched to the euro in 2002, with euro coins. He was in "Time" '
        "magazine's list, and called time on his career."
    )
    found = {e.name for e in extract_offline(text, tagger()).entities}
    assert {"Atang de la Rama", "Dalagang Bukid", "Johann Wilhelm", "Luzon", "Time"} <= found
    assert not found & {"Sarsuela", "Imperial", "Euro"}
    key = entity_key("Sarsuela")
    named = {key: Counter(person=1)}
    assert not_names({key: "Sarsuela"}, {key: frozenset()}, named, {"sarsuela"}) == []
    assert not_names({key: "Sarsuela"}, {key: frozenset()}, named, set(), {"sarsuela"}) == [key]
    evidence = {key: frozenset({"person"})}  # rules' evidence (a title line, a role) stands
    assert not_names({key: "Sarsuela"}, evidence, named, set(), {"sarsuela"}) == []


def test_a_royals_title_is_the_person_the_model_finds_by_the_name_before_of() -> None:
    text = (
        "Ida of Lorraine\n\nIda of Lorraine (c. 1040 - 1113) was a noblewoman. Ida's brother "
        "was Godfrey IV, and Ida's son was Baldwin."
    )
    types = model_types(text)
    assert types["Ida"] == "person" and types["Ida of Lorraine"] == "person"


def test_a_lone_name_the_model_misses_stays_and_an_everyday_word_goes() -> None:
    text = (
        "Lamprocles\n\nLamprocles was Socrates' and Xanthippe's eldest son. According to "
        "Aristotle, Socrates' descendants were unremarkable. Formed in 1990, the school closed."
    )
    names = {e.name for e in extract_offline(text, tagger()).entities}
    assert {"Lamprocles", "Socrates", "Xanthippe", "Aristotle"} <= names
    assert "Formed" not in names


def test_a_nationality_or_religion_alone_is_no_entity() -> None:
    text = (
        "The Portuguese navigator Vasco da Gama sailed for the Catholic king. "
        "Later the Portuguese and the Dutch fought over the Catholic missions in Goa."
    )
    names = {e.name for e in extract_offline(text, tagger()).entities}
    assert not names & {"Portuguese", "Catholic", "Dutch"}
    assert {"Vasco da Gama", "Goa"} <= names


def test_a_title_the_passage_names_again_is_kept_untyped() -> None:
    text = "Parmigiano-Reggiano\n\nParmigiano-Reggiano is made from unpasteurized cow's milk."
    assert [e.name for e in extract_offline(text, tagger()).entities] == ["Parmigiano-Reggiano"]


def test_an_honour_is_a_concept_whatever_the_model_reads_in_it() -> None:
    # The model reads these as an organization, a work of art and a law.
    text = (
        "He won the Academy Award for Best Actor in 1990. "
        "He won the Filmfare Award for Best Female Debut. "
        "She received the Primetime Emmy Award for Outstanding Lead Actress."
    )
    types = model_types(text)
    assert types == {
        "Academy Award for Best Actor": "concept",
        "Filmfare Award for Best Female Debut": "concept",
        "Primetime Emmy Award for Outstanding Lead Actress": "concept",
    }


def test_a_name_the_model_reads_across_a_possessive_is_one_name() -> None:
    text = (
        "The People's Republic of China was founded in 1949. She studied at King's College "
        "London and was buried in St George's Chapel, Windsor Castle. The Women's Tennis "
        "Association met. He won the America's Cup. An account in Hall's Chronicle says so."
    )
    for tagged, kept in ((None, True), (tagger(), False)):
        names = {e.name for e in extract_offline(text, tagged).entities}
        # The rules end a name at a possessive: a wrong country, a saint, a remnant.
        assert ({"Republic of China", "St George", "Chronicle"} <= names) is kept
    assert {
        "People's Republic of China",
        "King's College London",
        "St George's Chapel",
        "Women's Tennis Association",
        "America's Cup",
        "Hall's Chronicle",
        "Windsor Castle",
    } <= names


def test_a_possessive_before_a_name_is_its_owner_not_part_of_it() -> None:
    text = "Britain's Prime Minister Tony Blair met Germany's Angela Merkel in London's West End."
    names = {e.name for e in extract_offline(text, tagger()).entities}
    assert {"Tony Blair", "Angela Merkel", "West End"} <= names
    assert not [name for name in names if "'s" in name]


@pytest.mark.parametrize(
    ("span", "sentences", "name"),
    [
        ("People's Republic of China", [], "People's Republic of China"),  # a kind of people
        ("Korean People's Army", [], "Korean People's Army"),
        ("Court of King's Bench", [], "Court of King's Bench"),
        ("Seattle Storm of the Women's National Basketball Association", [], None),
        ("St George's Chapel", ["Kings are buried there."], "St George's Chapel"),  # a saint's
        ("Prince George's County", [], "Prince George's County"),  # a titled person's
        ("Hall's Chronicle", ["An account in Hall's Chronicle."], "Hall's Chronicle"),
        ("Hall's Chronicle", ["Edward Hall wrote it."], None),  # the chunk names the owner
        ("Lucasfilm's Computer Division", ["Lucasfilm sold it."], None),
        ("World Health Organization's List of Essential Medicines", [], None),  # an owner
        ("King's Chapel, Boston", [], "King's Chapel"),  # cut at punctuation no name holds
        ("\" The Witch's Curse", [], "Witch's Curse"),
        ("Valencian People's Union (UPV", [], "Valencian People's Union"),
        ("People's Artist of", [], None),  # a name ends with a name's word
        ("Draughtsman's Contract It", [], None),
        ("That's Entertainment", [], None),  # "that is", no possessive
        ("university's School of Speech", [], None),
        ("Peter Greenaway", [], None),  # no possessive inside
    ],
)
def test_a_possessive_inside_a_name_is_part_of_it_when_no_owner_is_named(
    span: str, sentences: list[str], name: str | None
) -> None:
    assert possessive_names([span], sentences) == ([] if name is None else [name])


def test_the_model_types_a_name_the_rules_write_without_its_last_period() -> None:
    text = (
        "Elizabeth II visited Martin Luther King Jr. in Atlanta. Warner Bros. made the film. "
        "He played for Chelsea F.C. in 2001."
    )
    types = model_types(text)
    assert types["Martin Luther King Jr"] == "person"
    assert types["Warner Bros"] == "organization"
    assert types["Chelsea F.C"] == "organization"  # the rules' suffix, whatever the model reads
    # Initials keep their period, so the small model's reading of them as a place ("B.S.C."
    # is a club) takes no vote that would keep "B.S.C" from "BSC".
    initials = {
        e.name: e.type for e in extract_offline("He won with B.S.C. in 1990.", tagger()).entities
    }
    assert initials.get("B.S.C") == "concept"


def test_a_name_whose_surname_the_model_reads_as_a_person_is_a_person() -> None:
    # The model tags "Brahms" alone here, so "Johannes Brahms" took no type from it.
    text = (
        'The "Slavonic Dances" were inspired by Johannes Brahms\'s own "Hungarian Dances" '
        "and were orchestrated at the publisher's request."
    )
    assert model_types(text)["Johannes Brahms"] == "person"


@pytest.mark.parametrize(
    ("name", "voted", "person"),
    [
        ("Johannes Brahms", {"brahms": "person"}, True),
        ("Johannes Brahms", {"brahms": "location"}, False),
        ("Tang Dynasty", {"tang": "person"}, False),  # the first word types nothing
        ("Master Rapper", {"rapper": "person"}, False),  # an everyday word
        ("Baron Dacre", {"dacre": "person"}, False),  # a peerage
        ("German Hessian", {"german": GROUP, "hessian": "person"}, False),
        ("Satrapy of Armenia", {"armenia": "person"}, False),  # not shaped like a person's
    ],
)
def test_only_a_person_shaped_name_takes_its_surname_s_type(
    name: str, voted: dict[str, str], person: bool
) -> None:
    assert surnamed(name, voted) is person


def test_a_country_is_a_place_however_the_sentence_uses_it() -> None:
    # "who" after a name makes it a person for the rules.
    text = (
        "Beverly Boys (born July 4, 1951) is a retired diver from Canada, who represented her"
        " native country in three consecutive Summer Olympics. Semyon attempts to legitimize"
        " his business with his wife Jordan (Reilly), who invests in a railway."
    )
    types = model_types(text)
    assert types["Canada"] == "location"
    assert types["Jordan"] == "person"  # a given name too


def test_a_country_s_name_that_names_a_person_of_the_chunk_is_that_person() -> None:
    text = (
        "Michael Jordan joined the Bulls in 1984. Jordan scored 63 points against Boston."
        " He later visited Uganda."
    )
    types = model_types(text)
    assert (types["Jordan"], types["Uganda"]) == ("person", "location")


def test_a_title_after_its_work_s_kind_is_a_product() -> None:
    text = (
        "She played Billy Beane's daughter in the 2011 film Moneyball, and starred in the"
        " miniseries The Kennedys. The movie came out in 2017, in which film Sharib Hashmi is"
        " the lead."
    )
    types = model_types(text)
    assert (types["Moneyball"], types["Kennedys"]) == ("product", "product")
    assert types["Sharib Hashmi"] == "person"


def test_a_doctrine_or_a_law_is_a_concept_and_a_town_of_a_place() -> None:
    text = (
        "The universities, though still dominated by Scholasticism, read Aristotle. The"
        " Endangered Species Act protects it. The peak lies south of the Town of Westcliffe"
        " in Custer County."
    )
    types = model_types(text)
    assert (types["Scholasticism"], types["Endangered Species Act"]) == ("concept", "concept")
    assert types["Town of Westcliffe"] == "location"


def test_a_country_or_region_after_a_bearing_is_a_place() -> None:
    text = (
        "Northern Bulgaria averages 1 degree cooler than the south. Amphi is the flagship high"
        " school of Amphitheater Public Schools of Tucson."
    )
    types = model_types(text)
    assert types["Northern Bulgaria"] == "location"
    assert types["Amphitheater Public Schools"] == "organization"
