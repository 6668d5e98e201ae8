"""Entity resolution's pure parts: name folding, evidence found in a chunk, alias groups."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ragstream.common.models import Chunk, Mention, MentionKind, entity_key
from ragstream.common.text.fold import (
    cjk_similar,
    compact,
    demonym_bases,
    expanded_fold,
    fold,
    head_singular_fold,
    joined_words,
    name_form,
    singular_fold,
    unprefixed_fold,
    word_set,
)
from ragstream.indexer.resolution.blocks import block_pairs
from ragstream.indexer.resolution.evidence import (
    BLOCKED,
    SameAs,
    block,
    found_in,
    ledger_rows,
    read_rows,
)
from ragstream.indexer.resolution.groups import groups
from ragstream.indexer.resolution.member import Member


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("İzmir", "Izmir"),
        ("Hugo Chávez", "Hugo Chavez"),
        ("St Louis", "St. Louis"),
        ("Palais Royal", "Palais-Royal"),
        ("Kim Il Sung", "Kim Il-sung"),
        ("IBM", "IBM Corp."),
        ("Air Niugini", "Air Niugini Limited"),
        ("Siemens", "Siemens AG"),
        ("Øresund", "Oresund"),
        ("ＴＥＲＮ Ｓ3", "tern s3"),
        ("蓝鲸科技", "蓝鲸科技有限公司"),
        ("U.S.A.", "USA"),
        ("J. R. R. Tolkien", "JRR Tolkien"),
    ],
)
def test_spellings_of_one_name_fold_alike(a: str, b: str) -> None:
    assert fold(a) == fold(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Mars", "Mar"),
        ("Co", "Inc"),
        ("Paris", "Pari"),
        ("Austria", "Australia"),
        ("AG", ""),
        ("John F Kennedy", "Johnf Kennedy"),
    ],
)
def test_different_names_stay_apart(a: str, b: str) -> None:
    assert fold(a) != fold(b)


def test_a_name_with_punctuation_meets_its_unpunctuated_spelling() -> None:
    assert compact("Coca-Cola") == entity_key("CocaCola")
    assert compact("St. Louis") == "stlouis"
    assert compact("Coca Cola") == ""


def test_a_name_of_several_words_meets_the_spelling_without_punctuation_inside_a_word() -> None:
    assert joined_words("Abdul Aziz bin Musa'id") == entity_key("Abdul Aziz bin Musaid")
    assert joined_words("Kim Il-sung") == "kim ilsung"
    # One word is compact's; punctuation between words only, or none, is no such spelling.
    assert joined_words("L'viv") == joined_words("St. Louis") == joined_words("Kim Il Sung") == ""
    evidence = [
        *found_in("He met Abdul Aziz bin Musa'id.", [entity("Abdul Aziz bin Musa'id")]),
        *found_in("Abdul Aziz bin Musaid ruled.", [entity("Abdul Aziz bin Musaid")]),
    ]
    members = {
        "abdul aziz bin musa'id": member(1, "person", "Abdul Aziz bin Musa'id"),
        "abdul aziz bin musaid": member(1, "person", "Abdul Aziz bin Musaid"),
    }
    assert len(groups(members, evidence, 64)["abdul aziz bin musaid"].members) == 2


def test_plural_folds_lowercase_names_and_names_of_several_words() -> None:
    assert singular_fold("sensors") == "sensor"
    assert singular_fold("marine sensors") == "marine sensor"
    assert singular_fold("companies") == "company"
    assert singular_fold("Reformed Churches") == "reformed church"
    assert singular_fold("British Overseas Territories") == "british overseas territory"
    assert singular_fold("Hughes") == singular_fold("Amazons") == ""
    assert singular_fold("glass") == singular_fold("status") == singular_fold("physics") == ""
    assert singular_fold("NASCAR Cup Series") == ""
    assert singular_fold("Pulitzer Prizes") == "pulitzer prize"  # not "priz"
    assert singular_fold("waltzes") == "waltz"
    assert singular_fold("churches") == "church"


def test_plural_folds_the_head_of_a_name_and_an_acronym() -> None:
    # The head stands before "of" or "for"; the last word may be a plural too.
    assert head_singular_fold("Academy Awards for Best Actor") == "academy award for best actor"
    assert head_singular_fold("Counts of Blois") == "count of blois"
    assert head_singular_fold("Count of Blois") == head_singular_fold("Museum of Arts") == ""
    assert head_singular_fold("Pulitzer Prizes") == head_singular_fold("Of Mice") == ""
    assert singular_fold("Institute of Contemporary Arts") == "institute of contemporary art"
    assert singular_fold("BAFTAs") == "bafta"
    assert singular_fold("EPs") == "ep"
    assert singular_fold("BAFTA") == singular_fold("Ps") == singular_fold("LaserDiscs") == ""


def test_an_acronym_and_its_plural_are_one_entity() -> None:
    members = {"bafta": member(3, "organization", "BAFTA"), "baftas": member(1, name="BAFTAs")}
    evidence = found_in("She won two BAFTAs.", [entity("BAFTAs")])
    assert groups(members, evidence, 64)["bafta"].members == ("bafta", "baftas")
    # Another capitalized word of one word and its plural stay apart, as before.
    proper = {"amazon": member(4, "organization", "Amazon"), "amazons": member(1, name="Amazons")}
    assert groups(proper, [SameAs("amazon", "amazons", "plural")], 64)["amazon"].members == (
        "amazon",
    )


def test_a_title_meets_its_form_without_a_leading_article() -> None:
    assert unprefixed_fold("The Bedford Incident") == entity_key("Bedford Incident")
    assert unprefixed_fold("The Godfather Part II") == "godfather part ii"
    assert unprefixed_fold("THE NICE GUYS") == "nice guys"
    # One word after the article is another thing as often as not; no article, no rule.
    assert unprefixed_fold("The Sun") == unprefixed_fold("The Independent") == ""
    assert unprefixed_fold("Bedford Incident") == unprefixed_fold("Feel the Love") == ""
    assert unprefixed_fold("Theodore Roosevelt Island") == ""
    assert unprefixed_fold("A Night of Mystery") == unprefixed_fold("The Night of Mystery")
    assert unprefixed_fold("An American Tail") == "american tail"
    # An initial is no article; "A" before one word is no title's article either.
    assert unprefixed_fold("A. Smith Jones") == unprefixed_fold("A Raja") == ""


def test_a_title_with_and_without_its_article_in_two_chunks_is_one_entity() -> None:
    with_article = found_in("The Bedford Incident is a film.", [entity("The Bedford Incident")])
    without = found_in("He starred in Bedford Incident.", [entity("Bedford Incident")])
    members = {
        "the bedford incident": member(2, "product", "The Bedford Incident"),
        "bedford incident": member(1, "product", "Bedford Incident"),
    }
    for evidence in ([*with_article, *without], [*without, *with_article]):
        found = groups(members, evidence, 64)
        assert found["bedford incident"].members == ("bedford incident", "the bedford incident")
        assert found["bedford incident"].canonical == "the bedford incident"
    # The chunk with the article deleted: nothing joins the other name any more.
    assert groups(members, without, 64)["bedford incident"].members == ("bedford incident",)


def test_short_forms_are_written_out() -> None:
    assert (
        expanded_fold("US Congress")
        == expanded_fold("U.S. Congress")
        == fold("United States Congress")
    )
    assert expanded_fold("St. Paul") == expanded_fold("St Paul") == "saint paul"
    assert expanded_fold("UK Antarctic Place-Names Committee") == fold(
        "United Kingdom Antarctic Place Names Committee"
    )
    assert expanded_fold("Main St") == expanded_fold("USA Today") == expanded_fold("Bus") == ""
    assert expanded_fold("United States Congress") == ""
    assert expanded_fold("War& Peace") == expanded_fold("War & Peace") == "war and peace"
    assert fold("Wells Fargo & Company") == fold("Wells Fargo & Co.") == "wells fargo"
    assert fold("Smith and Company") == "smith"
    assert fold("& Co") == "co"


def test_number_words_honours_and_name_forms() -> None:
    assert expanded_fold("Twelve Monkeys") == fold("12 Monkeys") == "12 monkeys"
    assert expanded_fold("Zero") == ""  # a lone number word is left alone
    assert fold("Donald George Mackay CBE") == "donald george mackay"
    assert fold("Steve Trevor Jr") == "steve trevor jr"
    assert name_form("Gardens of Farnese") == name_form("Farnese Gardens")
    assert name_form("Chess Olympiads") == name_form("Chess Olympiad")
    assert name_form("Jordan Inc") != name_form("Jordan")
    assert name_form("Sea-Tac") == name_form("SeaTac")


def test_demonyms_name_their_place() -> None:
    assert "south africa" in demonym_bases("South African")
    assert demonym_bases("Kuwaiti") == ["kuwait"]
    assert demonym_bases("Middle Eastern") == ["middle east"]
    assert "california" in demonym_bases("Californians")
    assert demonym_bases("Halvorsen") == demonym_bases("Boston") == []
    found = found_in("South African singers", [entity("South African")])
    assert SameAs("south africa", "south african", "demonym") in found
    assert not [s for s in found_in("x", [entity("Brian", "person")]) if s.rule == "demonym"]


def test_a_demonym_joins_its_one_live_place_typed_location() -> None:
    evidence = [SameAs("ugandan", "uganda", "demonym"), SameAs("ugand", "ugandan", "demonym")]
    members = {
        "uganda": member(4, "location", "Uganda"),
        "ugandan": member(1, "organization", "Ugandan"),
    }
    assert groups(members, evidence, 64)["ugandan"].members == ("uganda", "ugandan")
    # A place it is no demonym of, typed otherwise: AS Roma is no place.
    roma = {"roma": member(3, "organization", "Roma"), "roman": member(1, name="Roman")}
    assert groups(roma, [SameAs("roma", "roman", "demonym")], 64)["roman"].members == ("roman",)
    # A demonym typed location names a place of its own ("Milan" is no demonym of "Mila").
    milan = {"mila": member(1, "location", "Mila"), "milan": member(5, "location", "Milan")}
    assert groups(milan, [SameAs("mila", "milan", "demonym")], 64)["milan"].members == ("milan",)


def test_the_forms_of_one_name_stay_together_whatever_types_their_mentions_vote() -> None:
    members = {
        "chess olympiad": member(3, "organization", "Chess Olympiad"),
        "chess olympiads": member(1, "location", "Chess Olympiads"),
    }
    found = groups(members, [SameAs("chess olympiad", "chess olympiads", "plural")], 64)
    assert found["chess olympiads"].canonical == "chess olympiad"
    airport = {
        "sea-tac": member(2, "location", "Sea-Tac"),
        "seatac": member(1, "organization", "SeaTac"),
    }
    found = groups(airport, [SameAs("sea-tac", "seatac", "name")], 64)
    assert found["seatac"].members == ("sea-tac", "seatac")


def test_the_orders_of_one_name_s_words_share_a_word_set() -> None:
    assert word_set("Treaty of Versailles") == word_set("Versailles Treaty") == "treaty versailles"
    assert word_set("Monster Energy NASCAR Cup Series") == word_set(
        "NASCAR Monster Energy Cup Series"
    )
    assert word_set("House of Representatives U.S") == word_set(
        "United States House of Representatives"
    )
    assert word_set("Versailles") == word_set("宁波港口") == ""


def test_cjk_names_match_by_characters_strictly() -> None:
    assert cjk_similar("蓝鲸科技集团公", "蓝鲸科技集团")
    assert not cjk_similar("1号线", "2号线")
    assert not cjk_similar("北京", "南京")


def entity(name: str, type_: str = "concept") -> Mention:
    return Mention("w", "c", "d", MentionKind.ENTITY, entity_key(name), name=name, type=type_)


def test_abbreviations_are_found_both_ways_and_checked_by_initials() -> None:
    text = (
        "International Business Machines (IBM) met the WHO (World Health Organization). "
        "The Bank of England (BoE) spoke. Acme (XYZ) did not."
    )
    found = {(s.a, s.b) for s in found_in(text, []) if s.rule == "abbreviation"}
    assert found == {
        ("ibm", "international business machines"),
        ("who", "world health organization"),
        ("bank of england", "boe"),
    }


def test_a_surname_after_the_full_name_is_short_name_evidence() -> None:
    text = "Ingrid Halvorsen joined in 1990. Later Halvorsen led the lab."
    names = [entity("Ingrid Halvorsen", "person"), entity("Halvorsen")]
    assert SameAs("halvorsen", "ingrid halvorsen", "short_name") in found_in(text, names)
    before = "Halvorsen founded it. Ingrid Halvorsen joined in 1990."
    assert not [s for s in found_in(before, names) if s.rule == "short_name"]
    company = [entity("Halvorsen Aquatics", "organization"), entity("Halvorsen")]
    found = found_in("Halvorsen Aquatics grew. Halvorsen hired.", company)
    assert not [s for s in found if s.rule not in BLOCKED]


def test_a_royal_named_without_the_place_after_the_full_name_is_short_name_evidence() -> None:
    text = "Henry VIII of England married six times. Henry VIII died in 1547."
    names = [entity("Henry VIII of England", "person"), entity("Henry VIII", "person")]
    assert SameAs("henry viii", "henry viii of england", "short_name") in found_in(text, names)
    before = "Henry VIII died in 1547. Henry VIII of England married six times."
    assert not [s for s in found_in(before, names) if s.rule == "short_name"]
    place = [entity("University of Bergen", "organization"), entity("University")]
    assert not [
        s
        for s in found_in("University of Bergen grew. University", place)
        if s.rule == "short_name"
    ]


@pytest.mark.parametrize(
    ("text", "full", "short"),
    [
        ("Tug Hill rises. Hill is steep, and the hill is cold.", "Tug Hill", "Hill"),
        ("MTV Japan aired it. Japan loved it.", "MTV Japan", "Japan"),
        ("Territory of Papua grew. Papua exported.", "Territory of Papua", "Papua"),
        ("Myanmar Airways flew. Myanmar grew.", "Myanmar Airways", "Myanmar"),
    ],
)
def test_no_short_name_evidence_for_what_is_no_person(text: str, full: str, short: str) -> None:
    assert not [s for s in found_in(text, [entity(full), entity(short)]) if s.rule == "short_name"]


def test_ledger_rows_round_trip_and_are_keyed_by_each_entity() -> None:
    chunk = Chunk("c1", "w", "d", "text", 1, 0)
    evidence = [SameAs("ibm", "international business machines", "abbreviation")]
    rows = ledger_rows(chunk, evidence)
    assert sorted(r.source for r in rows) == ["ibm", "international business machines"]
    assert all(r.kind is MentionKind.SAME_AS and r.chunk_id == "c1" for r in rows)
    assert read_rows(rows) == evidence


def member(mentions: int, type_: str = "concept", name: str = "") -> Member:
    return Member(mentions, type_, name or "Name")


def test_a_group_is_the_component_and_its_canonical_the_most_mentioned() -> None:
    members = {"ibm": member(3), "international business machines": member(1), "x": member(9)}
    evidence = [SameAs("ibm", "international business machines", "abbreviation")]
    found = groups(members, evidence, max_size=64)
    assert found["international business machines"].canonical == "ibm"
    assert found["ibm"].members == ("ibm", "international business machines")
    assert found["x"].members == ("x",)
    tie = {"b": member(2), "a": member(2)}
    assert groups(tie, [SameAs("a", "b", "name")], 64)["b"].canonical == "a"


def test_keys_without_mentions_connect_but_are_no_members() -> None:
    members = {"hugo chávez": member(1), "hugo chavéz": member(1)}
    evidence = [
        SameAs("hugo chavez", "hugo chávez", "name"),
        SameAs("hugo chavez", "hugo chavéz", "name"),
    ]
    found = groups(members, evidence, 64)
    assert found["hugo chávez"].members == ("hugo chavéz", "hugo chávez")
    assert "hugo chavez" not in found


def test_members_of_different_types_are_split_and_fallback_types_join_the_heaviest() -> None:
    members = {
        "jordan": member(5, "location"),
        "jordan inc": member(2, "organization"),
        "jordan co": member(1, "concept"),
    }
    evidence = [SameAs("jordan", "jordan inc", "name"), SameAs("jordan", "jordan co", "name")]
    found = groups(members, evidence, 64)
    assert found["jordan"].members == ("jordan", "jordan co")
    assert found["jordan inc"].members == ("jordan inc",)


def test_spellings_of_one_name_stay_together_whatever_types_their_mentions_vote() -> None:
    members = {
        "izmir": member(3, "person"),  # a wrong vote must not split a spelling off
        "i̇zmir": member(1, "location"),
        "palais-royal": member(2, "location"),
        "palais royal": member(1, "organization"),
    }
    evidence = [
        SameAs("i̇zmir", "izmir", "name"),
        SameAs("palais-royal", "palais royal", "name"),
    ]
    found = groups(members, evidence, 64)
    assert found["izmir"].members == ("izmir", "i̇zmir")
    assert found["palais royal"].members == ("palais royal", "palais-royal")


def test_a_short_name_joins_only_one_full_name_and_never_chains_two() -> None:
    members = {
        "halvorsen": member(2, name="Halvorsen"),
        "ingrid halvorsen": member(1, "person", "Ingrid Halvorsen"),
        "erik halvorsen": member(1, "person", "Erik Halvorsen"),
        "ingrid": member(1, name="Ingrid"),
    }
    one = [SameAs("halvorsen", "ingrid halvorsen", "short_name")]
    assert groups(members, one, 64)["halvorsen"].members == ("halvorsen", "ingrid halvorsen")
    # The full name is canonical, though the surname alone is used more often.
    assert groups(members, one, 64)["halvorsen"].canonical == "ingrid halvorsen"
    both = [*one, SameAs("erik halvorsen", "halvorsen", "short_name")]
    found = groups(members, [*both, SameAs("ingrid", "ingrid halvorsen", "short_name")], 64)
    assert found["halvorsen"].members == ("halvorsen",)
    assert found["erik halvorsen"].members == ("erik halvorsen",)
    assert found["ingrid halvorsen"].members == ("ingrid", "ingrid halvorsen")


def test_plural_evidence_joins_lowercase_names_only() -> None:
    members = {"sensors": member(1, name="sensors"), "sensor": member(1, name="sensor")}
    assert groups(members, [SameAs("sensor", "sensors", "plural")], 64)["sensor"].members == (
        "sensor",
        "sensors",
    )
    proper = {"apples": member(1, name="apples"), "apple": member(4, "organization", "Apple")}
    assert groups(proper, [SameAs("apple", "apples", "plural")], 64)["apple"].members == ("apple",)


def test_plural_evidence_joins_names_of_several_words_unless_typed_person() -> None:
    members = {
        "academy awards": member(2, name="Academy Awards"),
        "academy award": member(3, "event", "Academy Award"),
    }
    found = groups(members, [SameAs("academy award", "academy awards", "plural")], 64)
    assert found["academy award"].members == ("academy award", "academy awards")
    people = {"jack evans": member(1, "person", "Jack Evans"), "jack evan": member(1, "person")}
    found = groups(people, [SameAs("jack evan", "jack evans", "plural")], 64)
    assert found["jack evans"].members == ("jack evans",)


def _at(block_key: str, rule: str, *keys: str) -> list[SameAs]:
    return [SameAs(key, block_key, rule) for key in keys]


def test_names_in_another_word_order_join_unless_typed_person() -> None:
    treaty = {
        "treaty of versailles": member(3, "event", "Treaty of Versailles"),
        "versailles treaty": member(1, name="Versailles Treaty"),
    }
    order = block("order", "treaty versailles")
    found = groups(treaty, _at(order, "order", *treaty), 64)
    assert found["versailles treaty"].canonical == "treaty of versailles"
    people = {
        "samuel taylor coleridge": member(2, "person", "Samuel Taylor Coleridge"),
        "samuel coleridge taylor": member(1, "person", "Samuel Coleridge Taylor"),
    }
    order = block("order", "coleridge samuel taylor")
    assert not block_pairs(_at(order, "order", *people), people)


def test_names_of_the_same_words_in_the_same_order_are_no_other_word_order() -> None:
    titles = {
        "feel the love": member(1, "product", "Feel the Love"),
        "feel love": member(1, "product", "Feel Love"),
        "madame la presidente": member(2, "product", "Madame la Presidente"),
        "madame presidente": member(1, "product", "Madame Presidente"),
    }
    evidence = [
        *_at(block("order", "feel love"), "order", "feel the love", "feel love"),
        *_at(block("order", "madame presidente"), "order", *list(titles)[2:]),
    ]
    assert not block_pairs(evidence, titles)


def test_a_name_ending_in_a_regnal_number_or_a_generation_has_no_middle_name() -> None:
    for name in ("Charles II", "John George I", "Martin Luther King Jr.", "George Tupou V"):
        found = found_in(f"{name} reigned.", [entity(name, "person")])
        assert not [s for s in found if s.rule == "middle"], name
    found = found_in("Jet Li starred.", [entity("Jet Li", "person")])
    assert [s for s in found if s.rule == "middle"]


def test_a_lone_name_joins_a_full_name_only_if_it_is_beside_it_wherever_used_alone() -> None:
    members = {
        "victoria": member(16, "person", "Victoria"),
        "victoria melita": member(1, "person", "Victoria Melita"),
    }
    one = block("document_name", "d1", "victoria")
    beside = _at(one, "document_name", "victoria", "victoria melita")
    assert groups(members, beside, 64)["victoria"].canonical == "victoria melita"
    # Used alone in another document too, where Victoria Melita is not named.
    elsewhere = _at(block("document_name", "d2", "victoria"), "document_name", "victoria")
    grouped = groups(members, beside + elsewhere, 64)
    assert grouped["victoria"].members == ("victoria",)


def test_a_person_without_the_middle_name_joins_the_one_full_name() -> None:
    key = block("middle", "paul", "stevens")
    people = {
        "paul stevens": member(2, "person", "Paul Stevens"),
        "paul david stevens": member(1, "person", "Paul David Stevens"),
    }
    found = groups(people, _at(key, "middle", *people), 64)
    assert found["paul stevens"].members == ("paul david stevens", "paul stevens")
    # The canonical name is the one used most of the names of several words.
    assert found["paul stevens"].canonical == "paul stevens"
    people["paul david stevens"] = member(3, "person", "Paul David Stevens")
    found = groups(people, _at(key, "middle", *people), 64)
    assert found["paul stevens"].canonical == "paul david stevens"
    # Two middle names: the short name points at two people, and joins neither.
    people["paul andrew stevens"] = member(1, "person", "Paul Andrew Stevens")
    found = groups(people, _at(key, "middle", *people), 64)
    assert {g.members for g in found.values()} == {(k,) for k in people}
    assert not block_pairs(_at(key, "middle", "paul stevens", "paul stevens jr"), {
        "paul stevens": member(1, "person", "Paul Stevens"),
        "paul stevens jr": member(1, "person", "Paul Stevens Jr"),
    })  # fmt: skip


def test_a_middle_initial_joins_the_one_full_name_it_stands_for() -> None:
    key = block("middle", "paul", "sorg")
    people = {
        "paul j. sorg": member(1, "person", "Paul J. Sorg"),
        "paul john sorg": member(2, "person", "Paul John Sorg"),
    }
    found = groups(people, _at(key, "middle", *people), 64)
    assert found["paul j. sorg"].members == ("paul j. sorg", "paul john sorg")
    assert found["paul j. sorg"].canonical == "paul john sorg"
    # Two middle names with that initial: it joins neither.
    people["paul james sorg"] = member(1, "person", "Paul James Sorg")
    found = groups(people, _at(key, "middle", *people), 64)
    assert found["paul j. sorg"].members == ("paul j. sorg",)
    # Initials stand for a word in the same place only, and never for another initial:
    # George W. Bush is neither of his father's names.
    bush = {
        "george w. bush": member(1, "person", "George W. Bush"),
        "george herbert walker bush": member(1, "person", "George Herbert Walker Bush"),
        "george h. bush": member(1, "person", "George H. Bush"),
        "george h. w. bush": member(1, "person", "George H. W. Bush"),
    }
    pairs = block_pairs(_at(block("middle", "george", "bush"), "middle", *bush), bush)
    assert {(p.a, p.b) for p in pairs} == {("george h. w. bush", "george herbert walker bush")}


def test_a_name_without_its_middle_joins_the_initial_and_the_name_it_stands_for() -> None:
    key = block("middle", "thomas", "ince")
    people = {
        "thomas ince": member(2, "person", "Thomas Ince"),
        "thomas h. ince": member(1, "person", "Thomas H. Ince"),
        "thomas harper ince": member(1, "person", "Thomas Harper Ince"),
    }
    # "Thomas Ince" points at both, which are one man: the initial joins first.
    found = groups(people, _at(key, "middle", *people), 64)
    assert found["thomas ince"].members == tuple(sorted(people))
    assert found["thomas ince"].canonical == "thomas ince"
    # Another Thomas Ince of that initial: the initial and the short name join neither.
    people["thomas henry ince"] = member(1, "person", "Thomas Henry Ince")
    found = groups(people, _at(key, "middle", *people), 64)
    assert found["thomas ince"].members == ("thomas ince",)
    assert found["thomas h. ince"].members == ("thomas h. ince",)


def test_an_untyped_name_written_as_a_persons_joins_the_person_without_its_initial() -> None:
    key = block("middle", "persis", "drell")
    people = {
        "persis drell": member(3, "person", "Persis Drell"),
        "persis s. drell": member(1, name="Persis S. Drell"),
    }
    found = groups(people, _at(key, "middle", *people), 64)
    assert found["persis s. drell"].members == ("persis drell", "persis s. drell")
    # Neither typed person: nothing says they are people, and they stay apart.
    untyped = {k: member(m.mentions, name=m.name) for k, m in people.items()}
    assert not block_pairs(_at(key, "middle", *untyped), untyped)
    # One untyped and no initial: a name typed person by mistake meets no lookalike.
    wars = {
        "french revolutionary wars": member(2, "person", "French Revolutionary Wars"),
        "french wars": member(1, name="French Wars"),
    }
    assert not block_pairs(_at(block("middle", "french", "wars"), "middle", *wars), wars)
    # Stage 1 records the block for an untyped name of capitalized words and initials only.
    chunk = "Persis S. Drell directs the lab. The Tug Hill plateau of lake-effect snow."
    mentions = [entity("Persis S. Drell", "concept"), entity("Tug Hill", "concept")]
    mentions.append(entity("lake-effect snow", "concept"))
    rules = {(s.a, s.b) for s in found_in(chunk, mentions) if s.rule == "middle"}
    assert rules == {("persis s. drell", key), ("tug hill", block("middle", "tug", "hill"))}


def test_a_surname_anywhere_in_the_document_joins_its_full_name() -> None:
    full = [replace(entity("Ingrid Halvorsen", "person"), chunk_id="c1")]
    alone = [replace(entity("Halvorsen", "person"), chunk_id="c2")]
    found = {
        *found_in("Ingrid Halvorsen founded the lab.", full),
        *found_in("Halvorsen said the tests passed.", alone),
    }
    at = block("document_name", "d", "halvorsen")
    assert SameAs("ingrid halvorsen", at, "document_name") in found
    assert SameAs("halvorsen", at, "document_name") in found
    members = {
        "ingrid halvorsen": member(1, "person", "Ingrid Halvorsen"),
        "halvorsen": member(1, "person", "Halvorsen"),
    }
    grouped = groups(members, sorted(found), 64)
    assert grouped["halvorsen"].canonical == "ingrid halvorsen"
    # A common word in its own chunk is no name.
    assert not found_in("Bishop said it. A bishop came.", [entity("Bishop", "person")])


def test_groups_do_not_depend_on_the_order_of_the_evidence() -> None:
    members = {k: member(1, name=k) for k in "abcdef"}
    evidence = [SameAs("a", "b", "name"), SameAs("c", "d", "cjk"), SameAs("b", "c", "name")]
    expected = groups(members, evidence, 64)
    assert groups(members, evidence[::-1], 64) == expected
    assert expected["a"].members == ("a", "b", "c", "d")


def test_an_oversized_component_stays_unmerged() -> None:
    members = {f"k{i}": member(1) for i in range(5)}
    chain = [SameAs(f"k{i}", f"k{i + 1}", "name") for i in range(4)]
    assert groups(members, chain, max_size=4)["k0"].members == ("k0",)
    assert groups(members, chain, max_size=5)["k0"].members == tuple(sorted(members))


def test_an_abbreviation_expanded_two_ways_joins_neither() -> None:
    members = {k: member(1) for k in ("epa", "environmental protection agency", "ecb")}
    members["economic partnership agreement"] = member(1)
    evidence = [
        SameAs("environmental protection agency", "epa", "abbreviation"),
        SameAs("economic partnership agreement", "epa", "abbreviation"),
        SameAs("ecb", "european central bank", "abbreviation"),
    ]
    found = groups(members, evidence, 64)
    assert found["epa"].members == ("epa",)
    assert found["ecb"].members == ("ecb",)  # its expansion has no mentions: no member


def test_a_chinese_name_glossed_in_latin_is_the_same_thing() -> None:
    text = (
        "东海海洋感知研究所（East China Sea Institute of Ocean Sensing，简称 ESIOS）与挪威卑尔根"
        "（Bergen）签署协议。青澜海洋装备有限公司（Qinglan Marine Equipment）。"
        "S3（使用 KP70-2311 批次的密封圈）在2024年（2024）测试（summary）。"
    )
    names = [
        entity("东海海洋感知研究所", "organization"),
        entity("卑尔根", "location"),
        entity("青澜海洋装备", "organization"),
        entity("S3", "product"),
    ]
    glossed = {(s.a, s.b) for s in found_in(text, names) if s.rule == "gloss"}
    assert glossed == {
        ("east china sea institute of ocean sensing", "东海海洋感知研究所"),
        ("esios", "东海海洋感知研究所"),
        ("bergen", "卑尔根"),
        ("qinglan marine equipment", "青澜海洋装备"),
    }


def test_a_chinese_name_meets_its_pinyin_spelling_and_a_country_its_english_name() -> None:
    names = [entity("周明哲", "person"), entity("宁波", "location"), entity("挪威", "location")]
    found = set(found_in("周明哲到宁波。挪威。", names))
    assert SameAs("zhou mingzhe", "周明哲", "pinyin") in found
    assert SameAs("ningbo", "宁波", "pinyin") in found
    assert SameAs("norway", "挪威", "country") in found
    assert not [s for s in found_in("东海海洋感知研究所。", [entity("东海海洋感知研究所")])]


def test_a_pinyin_spelling_joins_one_chinese_name_to_one_latin_entity() -> None:
    evidence = [SameAs("zhoushan", "舟山", "pinyin"), SameAs("zhou shan", "舟山", "pinyin")]
    # Spelled alike, one group; their type is what most mentions say (the model misread one).
    one = groups({"舟山": member(7, "location"), "zhoushan": member(3, "person")}, evidence, 64)
    assert one["zhoushan"].members == ("zhoushan", "舟山") and one["舟山"].canonical == "舟山"
    # Without the Latin entity the spelling joins nothing.
    assert groups({"舟山": member(7, "location")}, evidence, 64)["舟山"].members == ("舟山",)
    # Two homophones: neither joins the Latin name.
    homophones = [SameAs("lin haitao", han, "pinyin") for han in ("林海涛", "林海韬")]
    people = {"林海涛": member(1, "person"), "林海韬": member(1, "person")}
    found = groups({**people, "lin haitao": member(2, "person")}, homophones, 64)
    assert all(found[key].members == (key,) for key in ("林海涛", "林海韬", "lin haitao"))
