"""Runs of capitalized words in Latin script: which words continue a run, and where "of"
splits one. A run opens at a capitalized word (not an everyday word opening the sentence
before "the"), or at an initial and its period, and goes on through names, numbers,
letters and name particles, and through "I", "for" and "the" only after certain words
("Lothair I", "Center for Wooden Boats", "Boso the Elder"). Pure functions of one sentence.
"""

from __future__ import annotations

import re

from ragstream.indexer.stages.extract import nlp_lexicon as lex
from ragstream.indexer.stages.extract.nlp_evidence import numbered
from ragstream.indexer.stages.extract.nlp_junk import everyday_word
from ragstream.indexer.stages.extract.nlp_tokens import Token, latin_tokens

_WORDISH = re.compile(r"\w")


def runs(sentence: str) -> list[list[Token]]:
    """The runs of the sentence's capitalized words, in order."""
    found: list[list[Token]] = []
    current: list[Token] = []
    for token in latin_tokens(sentence):
        if current and not (_joined(sentence, current[-1], token) and _extends(current, token)):
            found.append(current)
            current = []
        opens = token.kind == "name" and not _opener(sentence, token)
        if current or opens or _opens_initials(sentence, token):
            current.append(token)
        if token.possessive and current:
            found.append(current)
            current = []
    if current:
        found.append(current)
    return found


def _joined(sentence: str, previous: Token, token: Token) -> bool:
    gap = sentence[previous.end : token.start]
    if previous.possessive:
        return False
    if gap == ". ":
        # "I" after a name is its regnal number ("Lothair I. Charles the Bald ruled next")
        initial = bool(lex.INITIALS.match(previous.text)) and previous.text != "I"
        return previous.text in lex.ABBREVIATED_TITLES or initial
    return gap in (" ", " & ")


def _opens_initials(sentence: str, token: Token) -> bool:
    """An initial followed by its period that may open a name ("H. G. Wells")."""
    return token.kind == "letter" and sentence.startswith(". ", token.end)


def _extends(run: list[Token], token: Token) -> bool:
    joins = _JOINING_WORDS.get(token.text)
    if joins is not None:
        return joins(run)
    last = run[-1]
    if token.kind == "name":
        return True
    if token.kind == "number":
        return last.kind in ("name", "letter")
    if token.kind == "letter":
        first_name = last.kind == "name" and last.text.isalpha() and last.text[1:].islower()
        return first_name or last.kind == "letter"
    regnal = last.text == "I" and len(run) > 1  # "Engelbert I of Berg"
    # "François van der Merwe", "Atang de la Rama", "Así en el Barrio como en el Cielo": up to
    # three particles in a row after a name; "of" has rules of its own (split_at_of)
    particles = _trailing_particles(run)
    more = (
        last.kind == "particle"
        and "of" not in (last.text, token.text)
        and particles < _MOST_PARTICLES
        and run[-particles - 1].kind == "name"
    )
    return token.kind == "particle" and (last.kind == "name" or regnal or more)


_MOST_PARTICLES = 3


def _trailing_particles(run: list[Token]) -> int:
    """How many particles end the run (a run opens at a name, so fewer than its length)."""
    count = 0
    while count < len(run) and run[-count - 1].kind == "particle":
        count += 1
    return count


def _regnal(run: list[Token]) -> bool:
    """ "I" after a name is a regnal number, "Lothair I", not the pronoun."""
    last = run[-1]
    return last.kind == "name" and last.text[1:].islower() and not last.possessive


def _for_joins(run: list[Token]) -> bool:
    """ "for" after an institution or an honour: "Center for Wooden Boats", "Order of the
    British Empire for Gallantry" (the head opens the run); trimmed when no name follows."""
    last = run[-1]
    headed = run[0].text in lex.FOR_HEADS and any(t.text == "of" for t in run)
    return last.kind == "name" and (last.text in lex.FOR_HEADS or headed)


def _the_joins(run: list[Token]) -> bool:
    """An epithet, "Boso the Elder"; "Battle of the Somme", "Order of the Garter", "National
    Endowment for the Arts"; trimmed when no name follows."""
    last = run[-1]
    epithet = len(run) == 1 and last.kind == "name"
    one_word = len(run) == 2 and run[0].kind == "name"  # "Dissolution of the Monasteries"
    of_the = len(run) >= 2 and last.text == "of" and (run[-2].text in lex.OF_HEADS or one_word)
    return epithet or of_the or last.text == "for"


_JOINING_WORDS = {"I": _regnal, "for": _for_joins, "the": _the_joins}
"""Words that continue a run only after certain words before them."""


def split_at_of(run: list[Token], modifies: bool = False) -> list[list[Token]]:
    """Keeps "of" inside a name after an institution word and before a non-institution
    ("Institute of Ocean Sensing" is one name, "Lab of Northmere University" two), between
    two single words, as in "Ermengarde of Tours" or "Bank of America", or "the" and one word
    after the first ("Dissolution of the Monasteries", "Wars of the Roses") unless a word
    that the last one qualifies follows the run (`modifies`: "the Mausoleum of the Račić
    family"), or a royal title and a name or a name and its number before one ("Princess
    Ileana of Romania", "Engelbert I of Berg"), and after a "for" ("National Commission for
    the Development of Indigenous Peoples")."""
    for index, token in enumerate(run):
        if token.text != "of":
            continue
        left, right = run[:index], run[index + 1 :]
        one_word = len(left) == 1 and left[0].text not in lex.TITLES
        the_one = (
            len(right) == 2
            and right[0].text == "the"
            and not modifies
            and left[-1].text not in _RANKS_AND_ROLES
        )
        short_pair = len(right) == 1 and (one_word or _royal(left) or numbered(left))
        titled = any(t.text == "for" for t in left)
        joined = bool(left and right) and (
            left[-1].text in lex.OF_HEADS or short_pair or (one_word and the_one) or titled
        )
        if not joined or right[-1].text in lex.OF_HEADS or right[-1].text in lex.ORG_SUFFIXES:
            rest = right[1:] if right and right[0].text == "the" else right
            return [part for part in (left, *split_at_of(rest, modifies)) if part]
    return [run]


_RANKS_AND_ROLES = lex.NOBLE_TITLES | lex.ROYAL_TITLES | lex.OCCUPATIONS
"""Words before "of the" that make a role, not a name ("Duke of the Franks")."""


def _royal(tokens: list[Token]) -> bool:
    """A royal or noble title and one name ("Princess Ileana" of "Princess Ileana of
    Romania")."""
    return (
        len(tokens) == 2
        and tokens[0].text in lex.ROYAL_TITLES
        and tokens[1].kind == "name"
        and tokens[1].text not in lex.TITLE_AFTER
    )


def sentence_initial(sentence: str, token: Token) -> bool:
    """First word of a sentence written in a Latin script (no word or ideograph before it)."""
    return not _WORDISH.search(sentence[: token.start]) and not _has_han(sentence)


def _has_han(text: str) -> bool:
    return any("\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff" for char in text)


def _opener(sentence: str, token: Token) -> bool:
    """An everyday word and "the" opening the sentence ("Following the Dissolution of the
    Monasteries", unlike "Boso the Elder"): no name's first word, so the name after it is
    read whole."""
    opens = token.kind == "name" and sentence.startswith(" the ", token.end)
    return opens and sentence_initial(sentence, token) and everyday_word(token.text)
