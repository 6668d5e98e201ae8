"""The kind of thing an encyclopedic passage is about, from how its first sentence defines it.

Encyclopedic text names its subject in a title line and defines it in the first sentence:
"Kate Mulgrew (born April 29, 1955) is an American actress", "The Mission is a 1986 British
period drama film". The head noun of "is a ..." (the last word of HEAD_NOUNS in the noun
phrase after it: "an American film production company" is a company) gives the type; a
parenthesis opening with a birth or a life span after the sentence's first words gives
person. Only the sentence right after the title is read.
"""

from __future__ import annotations

import re

from ragstream.indexer.stages.extract.nlp_lexicon import (
    EVENT,
    LOCATION,
    ORGANIZATION,
    PERSON,
    PRODUCT,
)


def _nouns(text: str) -> tuple[str, ...]:
    return tuple(text.split(","))


HEAD_NOUNS = {
    PRODUCT: _nouns(
        "film,movie,novel,book,album,single,song,series,sitcom,opera,play,musical,video game,"
        "documentary,journal,magazine,newspaper,painting,poem,short story,comic,anime,manga,"
        "telefilm,mockumentary,soundtrack,software,aircraft,car,vehicle,locomotive,ship"
    ),
    ORGANIZATION: _nouns(
        "company,band,group,airline,university,school,college,party,club,team,organization,"
        "organisation,radio station,television station,church,franchise,institution,agency,"
        "firm,corporation,manufacturer,publisher,label,charity,foundation,society,orchestra"
    ),
    LOCATION: _nouns(
        "city,town,village,river,lake,mountain,county,township,district,state,province,country,"
        "island,region,airport,railway station,hotel,park,garden,bridge,building,highway,road,"
        "street,borough,municipality,commune,suburb,neighbourhood,neighborhood,valley,tributary,"
        "peninsula,museum,stadium,castle,cathedral,courthouse,tower,capital,territory"
    ),
    EVENT: _nouns("war,battle,election,tournament,championship,festival,competition,massacre"),
    PERSON: _nouns(
        "actor,actress,singer,songwriter,politician,writer,author,poet,composer,director,"
        "player,footballer,painter,artist,musician,businessman,businesswoman,nobleman,princess,"
        "prince,king,queen,bishop,priest,scientist,physicist,chemist,journalist,athlete,"
        "runner,judoka,philosopher,historian,architect,engineer,producer,screenwriter,rapper,"
        "dancer,model,lawyer,judge,cleric,theologian,general,officer,soldier,diplomat,member"
    ),
}
_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the|one of the)\s+([^.;:]{0,120})")
_HEADS = {noun: kind for kind, nouns in HEAD_NOUNS.items() for noun in nouns}  # noun -> type
_HEAD = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _HEADS), key=len, reverse=True)) + r")s?\b",
    re.IGNORECASE,  # "was the King of Deira", "a Bishop of Clonfert"
)
_LIFE = re.compile(
    r"^(?:[^.()]|\b[A-Z]\.){2,80}?\(\s*[;,]?\s*"  # "John R. Smight(", "Tang Baiqiao (; born"
    r"(?:born\b|b\.|née\b|c\.\s*\d|fl\.|\d{3,4}\s*[–-]|[^()]{0,30}\d{3,4}\s*[–-])"
)
_COUNTED_MEMBER = re.compile(r"\b\d+(?:st|nd|rd|th)\s+member\b")
"""A member counted among others: a state's or a club's place in an organization."""
_PHRASE_END = re.compile(
    r",|;|\s(?:from|of|in|by|on|at|with|who|which|that|based|located|situated|associated"
    r"|serving|directed|written|starring|founded|owned|operated|known)\s"
)
"""Where a noun phrase after "is a" ends: the type is the last head noun of the first such
phrase that holds one ("an American film director, producer" -> director; "the King of
Deira" -> king; "an Italian Dominican, theologian" -> theologian; "a radio station serving
the Wichita Falls area with a Modern Country format" -> radio station)."""


def subject_type(definition: str) -> str | None:
    """The type the defining sentence gives its subject, or None when it gives none."""
    if _LIFE.match(definition):
        return PERSON
    copula = _COPULA.search(definition)
    if copula is None:
        return None
    for phrase in _PHRASE_END.split(copula.group(1)):
        if _COUNTED_MEMBER.search(phrase):
            return None  # "the 193rd member of the United Nations": a country as likely
        if heads := _HEAD.findall(phrase):
            return _HEADS[heads[-1].lower()]
    return None
