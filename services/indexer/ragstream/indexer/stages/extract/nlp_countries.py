"""Countries and their regions by their English names (pycountry's ISO 3166 tables), and the
type a country's name takes wherever a chunk writes it alone.

The small model reads a country by the role it plays in a sentence: "Uganda" in a police
force's infobox is an organization, "Cuba" or "the Netherlands" that a team or a government
acts for is a person. A country's name is a place however the sentence uses it, unless the
chunk names a person by it ("Michael Jordan" ... "Jordan scored").
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from ragstream.indexer.stages.extract.nlp_lexicon import LOCATION, PERSON

COMMON_NAMES = frozenset(
    {
        *("Russia", "Turkey", "England", "Scotland", "Wales", "Northern Ireland", "Burma"),
        *("Holland", "Macedonia", "Palestine", "Kosovo", "Brunei", "Swaziland", "Micronesia"),
        *("Ivory Coast", "Vatican City", "Cape Verde", "East Timor"),
    }
)
"""Countries' names in everyday English that the ISO tables do not write ("Russian
Federation", "Türkiye", "Myanmar"), and the nations of the United Kingdom."""
GIVEN_NAMES = frozenset({"Jordan", "Chad", "Georgia", "India", "Israel", "Kenya"})
"""Countries' names that are people's given names too: typed a person, by the rules or the
model, they stay one."""


@functools.cache
def countries() -> frozenset[str]:
    """English names of the countries: ISO 3166's names, common and official, and
    COMMON_NAMES."""
    import pycountry  # its tables are read on first use only

    fields = ("name", "common_name", "official_name")
    iso = {str(getattr(c, f)) for c in pycountry.countries for f in fields if hasattr(c, f)}
    return frozenset(iso | COMMON_NAMES)


@functools.cache
def regions() -> frozenset[str]:
    """English names of the countries and their regions (ISO 3166-2's subdivisions)."""
    import pycountry

    return countries() | frozenset(region.name for region in pycountry.subdivisions)


def country_types(spellings: Mapping[str, str], types: Mapping[str, str]) -> dict[str, str]:
    """LOCATION for each key whose name is a country's and is typed otherwise; not a given
    name typed a person ("his wife Jordan", "Abbot Jordan"), nor a word of a person's name
    of the chunk ("Jordan" beside "Michael Jordan")."""
    people = {
        word
        for key, spelling in spellings.items()
        if types.get(key) == PERSON and " " in spelling
        for word in spelling.split()
    }
    return {
        key: LOCATION
        for key, spelling in spellings.items()
        if spelling in countries()
        and types.get(key) != LOCATION
        and spelling not in people
        and not (types.get(key) == PERSON and spelling in GIVEN_NAMES)
    }
