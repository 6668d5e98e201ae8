"""The tokens of a Latin-script sentence as the name finder reads them.

A token is a word, a number, an initial or a name particle ("van", "de"), with its offsets;
a possessive "'s" is cut off and remembered, since a run of name words ends there, and so
is the lowercase end of an adjective made of a name ("Bronx-born", "Oscar-winning",
"English-language", "London-based": the name is "Bronx", "Oscar", ...), an English prefix
before a name ("post-World War II", "ex-King Valdemar", "mid-September": the name begins
after it) and the lowercase word before a name that a list run together lost its space to
("kjærtegnDeath", "plumeJacques Lecoutier"). A month is no name
word, except as a given name: right before a name word and after no number ("Jan Garbarek",
"June Allyson", "Karl August Wittfogel"; not "13 May Salandra", "In March Napoleon" or "May
Fourth").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragstream.common.text.analyzer import ENGLISH_STOPWORDS
from ragstream.indexer.stages.extract import nlp_lexicon as lex

_L = "A-Za-z0-9\u00c0-\u024f"
_TOKEN = re.compile(rf"[{_L}](?:[{_L}'’&.\-]*[{_L}])?")
_POSSESSIVE = re.compile(r"['’]s$")
_NUMBER = re.compile(r"^\d+(?:[.\-]\d+)*$")
_LETTER_WORD = re.compile(r"^[A-Z]-[a-z]")  # O-ring, X-ray: words, not names
_ADJECTIVE_END = re.compile(
    r"(?:-[a-z]+)*-(?:[a-z]{2,}ed|[a-z]{3,}ing"
    r"|born|language|style|era|class|type|like|led|run|set|made|wide|family|medium)$"
)
"""A participle ("-based", "-winning"; too long for a hyphenated given name's second
syllable, as in "Chan-wook" or "Kwok-ming") or a noun that makes an adjective, with the
lowercase words before it ("Lord-in-waiting" is "Lord")."""
_PREFIX = re.compile(
    r"^(?:(?:made-for|pre|post|non|anti|pro|ex|mid|early|late|half|inter|then|fellow|neo|pan"
    r"|co|all|ultra|semi|sub|trans|counter|cross|multi|quasi|pseudo|over|under)-)+(?=[A-Z])"
)
"""English prefixes; not the particles that begin Arabic or Hebrew names ("al-", "ha-")."""
_GLUED_MIN = 3
"""Lowercase letters before a capital that make a word of their own ("iHeartMedia", "eBay"
and "kWh" are one word each)."""
_GLUED_NAMES = ("fitz",)
"""Lowercase heads that belong to the name ("Gilbert fitzBaderon")."""
YEAR = re.compile(r"^(?:19|20)\d\d$")
NEXT_LOWERCASE_WORD = re.compile(r" ([a-z][a-z'-]*)\b")
"""A lowercase word after one space, matched at a name's end: the noun it qualifies or a
verb ("Račić family", "Opera singer")."""
_ORDINAL_DAY = re.compile(
    r"^(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|Eighth|Ninth|Tenth|Eleventh|Twelfth|"
    r"Thirteenth|Fourteenth|Fifteenth|Sixteenth|Seventeenth|Eighteenth|Nineteenth|Twentieth|"
    r"Thirtieth|Twenty-\w+|Thirty-\w+)$"
)
"""A day written as a word after its month ("May Fourth")."""


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    start: int
    end: int
    kind: str
    """name, number, letter, particle or other."""
    possessive: bool


def latin_tokens(sentence: str) -> list[Token]:
    found: list[Token] = []
    for match in _TOKEN.finditer(sentence):
        text, start, end = match.group(), match.start(), match.end()
        head = head_cut(text)
        text, start = text[head:], start + head
        possessive = bool(_POSSESSIVE.search(text)) and len(text) > 2
        if possessive:
            text, end = text[:-2], end - 2
        adjective = _ADJECTIVE_END.search(text)
        if adjective is not None:
            text, end = text[: adjective.start()], end - len(text) + adjective.start()
        found.append(Token(text, start, end, _kind(text), possessive))
    return _given_names(sentence, found)


def head_cut(text: str) -> int:
    """How many leading characters of a word (or of a name the model found) are a prefix or
    a glued word, not part of the name."""
    if not text[:1].islower() or text.islower():  # most words: nothing to cut
        return 0
    prefix = _PREFIX.match(text)
    if prefix is not None:
        return prefix.end()
    capital = next((i for i, char in enumerate(text) if char.isupper()), 0)
    head, rest = text[:capital], text[capital + 1 : capital + 2]
    glued = capital >= _GLUED_MIN and head.isalpha() and head.islower() and rest.islower()
    return capital if glued and not head.startswith(_GLUED_NAMES) else 0


def _given_names(sentence: str, tokens: list[Token]) -> list[Token]:
    """Months used as given names, made name words (see the module's docstring)."""
    for i, token in enumerate(tokens):
        if token.text not in lex.MONTHS or i + 1 == len(tokens):
            continue
        following, previous = tokens[i + 1], tokens[i - 1] if i else None
        dated = previous is not None and (
            previous.kind == "number" or previous.text.lower() in lex.BEFORE_A_DATE
        )
        joined = sentence[token.end : following.start] == " "
        day = bool(_ORDINAL_DAY.match(following.text))
        if joined and following.kind == "name" and not dated and not day:
            tokens[i] = Token(token.text, token.start, token.end, "name", token.possessive)
    return tokens


def _kind(text: str) -> str:
    if _NUMBER.match(text):
        return "number"
    if text in lex.NAME_PARTICLES:
        return "particle"
    stop = text in lex.BREAKS or (text.istitle() and text.lower() in ENGLISH_STOPWORDS)
    if len(text) == 1 and not stop:
        return "letter" if text.isupper() else "other"
    capitalized = text[0].isupper() or any(char.isupper() for char in text[1:])
    return "name" if capitalized and not stop and not _LETTER_WORD.match(text) else "other"
