"""The kind of thing an encyclopedic passage is about, from how its first sentence defines it.

Encyclopedic text names its subject in a title line and defines it in the first sentence:
"Kate Mulgrew (born April 29, 1955) is an American actress", "The Mission is a 1986 British
period drama film". The head noun of "is a ..." (the last word of HEAD_NOUNS in the noun
phrase after it: "an American film production company" is a company; not a name's last word
there, as in "a dual Austrian/United States citizen") gives the type. A noun phrase with no
such noun gives person when "who" follows it, and location when the phrases after it place
the subject ("a waterfall in southern Africa on the Zambezi River"); a person or a company
named after it is another thing ("a world map compiled ... by the Ottoman admiral"). A
parenthesis opening with a birth or a life span after the sentence's first words gives
person. Only the sentence right after the title is read.
"""

from __future__ import annotations

import itertools
import re

from ragstream.indexer.stages.extract.nlp_countries import regions
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
        "telefilm,mockumentary,soundtrack,software,aircraft,car,vehicle,locomotive,ship,"
        "trilogy,motion picture,short subject,thriller,comedy,drama,brand,steamship,warship,"
        "frigate,schooner,submarine,destroyer,battleship,train,ballad,EP,mixtape,release,"
        "game,expansion pack,production,piece of music,orchestral piece,bomber,airliner,helicopter"
    ),
    ORGANIZATION: _nouns(
        "company,band,group,airline,university,school,college,party,club,team,organization,"
        "organisation,radio station,television station,church,franchise,institution,agency,"
        "firm,corporation,manufacturer,publisher,label,charity,foundation,society,orchestra,"
        "publishing house,royal house,noble house,lower house,upper house"
    ),
    LOCATION: _nouns(
        "city,town,village,river,lake,mountain,county,township,district,state,province,country,"
        "island,region,airport,railway station,hotel,park,garden,bridge,building,highway,road,"
        "street,borough,municipality,commune,suburb,neighbourhood,neighborhood,valley,tributary,"
        "peninsula,museum,stadium,castle,cathedral,courthouse,tower,capital,territory,"
        "waterfall,ridge,peak,glacier,cape,bay,plateau,volcano,hill,archipelago,lagoon,"
        "reservoir,creek,reef,atoll,beach,headland,cave,hamlet,settlement,parish,locality,house,"
        "observatory"
    ),
    EVENT: _nouns("war,battle,election,tournament,championship,festival,competition,massacre"),
    PERSON: _nouns(
        "actor,actress,singer,songwriter,politician,writer,author,poet,composer,director,"
        "player,footballer,painter,artist,musician,businessman,businesswoman,nobleman,princess,"
        "prince,king,queen,bishop,priest,scientist,physicist,chemist,journalist,athlete,"
        "runner,judoka,philosopher,historian,architect,engineer,producer,screenwriter,rapper,"
        "dancer,model,lawyer,judge,cleric,theologian,general,officer,soldier,diplomat,member,"
        "sailor,rower,swimmer,cyclist,boxer,wrestler,golfer,jockey,skier,fencer,canoeist,"
        "sprinter,coach,entrepreneur,inventor,mathematician,economist,physician,surgeon,"
        "astronaut,aviator,emperor,empress,monarch,activist,statesman,pianist,guitarist,"
        "drummer,violinist,conductor,cartoonist,illustrator,photographer,sculptor,novelist,"
        "playwright,lyricist,comedian,broadcaster,professor,president,attorney,prelate,"
        "cartographer,chieftain,benefactor,benefactress,merchant,banker,scholar,duke,duchess,"
        "daughter,son,wife,husband,mother,father,brother,sister,widow,consort,youngest,eldest,"
        "founder,cardinal,flying ace,superintendent,character,governor,fellow,graduate,captain,"
        "designer,production designer,peer,count,countess,earl,baron,baroness,lord,lady,chief,"
        "ancestor,martyr,chronicler,servant,senator,noble,aristocrat"
    ),
}
_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the|one of the)\s+([^.;:]{0,120})")


def _forms(noun: str) -> tuple[str, ...]:
    """A head noun and its plurals ("tributaries", "churches")."""
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun, noun[:-1] + "ies"
    return noun, noun + "s", noun + "es"


_HEADS = {
    form: kind for kind, nouns in HEAD_NOUNS.items() for n in nouns for form in _forms(n.lower())
}
"""A head noun, singular or plural, and the type it gives."""
_HEAD = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _HEADS), key=len, reverse=True)) + r")\b",
    re.IGNORECASE,  # "was the King of Deira", "a Bishop of Clonfert"
)
_LIFE = re.compile(
    r"^(?:[^.()]|\b[A-Z]\.){2,80}?\(\s*[;,]?\s*"  # "John R. Smight(", "Tang Baiqiao (; born"
    r"(?:born\b|b\.|née\b|c\.\s*\d|fl\.|\d{3,4}\s*[–-]|[^()]{0,30}\d{3,4}\s*[–-])"
)
_COUNTED_MEMBER = re.compile(r"\b\d+(?:st|nd|rd|th)\s+member\b")
"""A member counted among others: a state's or a club's place in an organization."""
_PHRASE_END = re.compile(
    r",|;|\s(?:from|of|in|by|on|at|with|who|whom|whose|which|that|serving|starring"
    r"|(?:based|located|situated|associated|directed|written|founded|owned|operated|dedicated"
    r"|devoted|produced|published|released|licensed|named|known)"
    r"\s+(?:in|at|on|by|to|with|as|for|near|out|from))\s"
)
"""Where a noun phrase after "is a" ends. The type is the last head noun of the first
phrase that holds one, while only commas and "of" lead to it ("an American film director,
producer" -> director; "the King of Deira" -> king; "an Italian Dominican, theologian" ->
theologian; "a trilogy of science fiction novels" -> trilogy; "a radio station serving the
Wichita Falls area with a Modern Country format" -> radio station). A participle ends it
before its preposition only ("a company based in Oslo", not "a Pittsburgh-based singer" nor
"a privately owned airline"). After another word ("from", "by", "located in"), the phrases
name other things: a place there places the subject ("a waterfall ... on the Zambezi
River"), a person or a company there is not it ("a map compiled by the Ottoman admiral", "a
professor at Tsinghua University"), and "who" says the subject is a person ("a merchant
from Leith, who founded ...")."""
_NO_HEAD = re.compile(r"\bpeer[ -]review", re.IGNORECASE)
"""A head noun's word in a compound that names no kind: "a peer-reviewed journal"."""
_CONTINUING = frozenset({"", ",", ";", "of"})
_WHO = frozenset({"who", "whom", "whose"})


def subject_type(definition: str) -> str | None:
    """The type the defining sentence gives its subject, or None when it gives none."""
    if _LIFE.match(definition):
        return PERSON
    copula = _COPULA.search(definition)
    if copula is None:
        return None
    defining = _NO_HEAD.sub("review", copula.group(1))
    parts = _PHRASE_END.split(defining)
    ends = ["", *(end.strip() for end in _PHRASE_END.findall(defining))]
    listed = True  # only commas and "of" between the copula and this phrase
    placed = False
    for phrase, end in zip(parts, ends, strict=True):
        listed = listed and end in _CONTINUING
        if end in _WHO:
            return PERSON
        if _COUNTED_MEMBER.search(phrase):
            return None  # "the 193rd member of the United Nations": a country as likely
        heads = [m.group(1) for m in _HEAD.finditer(phrase) if not (listed and _in_name(phrase, m))]
        if listed and heads:
            return _HEADS[heads[-1].lower()]
        placed = placed or (bool(heads) and _HEADS[heads[-1].lower()] == LOCATION)
    return LOCATION if placed else None


def _in_name(phrase: str, head: re.Match[str]) -> bool:
    """A place's head noun that ends the name of a country or a region is that name's, and
    the phrase's noun is another: "a dual Austrian/United States citizen", "a Solomon Islands
    politician" (not "a United States National Park")."""
    if _HEADS[head.group(1).lower()] != LOCATION or not head.group(1)[0].isupper():
        return False
    words = re.split(r"[\s/]+", phrase[: head.end()])
    capitalized = list(itertools.takewhile(lambda w: w[:1].isupper(), reversed(words)))
    return any(
        " ".join(reversed(capitalized[:n])) in regions() for n in range(2, len(capitalized) + 1)
    )
