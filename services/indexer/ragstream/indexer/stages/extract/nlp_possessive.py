"""Names with a possessive inside them: "People's Republic of China", "St George's Chapel".

The rules end a run of name words at a possessive (nlp_english), which is right when the
possessive names an owner ("Germany's Angela Merkel", "London's West End", "Evanescence's
tour") and wrong when it is part of the name: the rules then find a wrong name ("Republic of
China", "St George", "Tennis Association") and a remnant ("Chapel"). The named-entity model
reads many such names whole; a name it reads whole is kept when its possessive is one a
name is made of:
- a genitive of kind: the possessor ends in a word for a kind of people or a rank
  (nlp_lexicon.GENITIVE_KINDS): "People's Republic of China", "Women's Tennis Association",
  "FIFA Women's World Cup", "King's College", "Court of King's Bench";
- a saint's or a titled person's name of two words: "St George's Chapel", "Saint Mary's
  School", "Prince George's County";
- a one-word owner the chunk names nowhere else, so a name of its own only there: "Hall's
  Chronicle", "Hudson's Bay Company", "Daly's Theatre". An owner the chunk also names alone
  ("Lucasfilm's Computer Division" beside "Lucasfilm") or of several words ("World Health
  Organization's List of Essential Medicines") stays apart.
A person is never such a name: a possessive before a person's name is an owner's.
The model's span is cut at punctuation that no name holds ("King's Chapel, Boston") and must
open and end with a capitalized word that is no stopword ("... Contract It" is two).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ragstream.common.text.analyzer import ENGLISH_STOPWORDS
from ragstream.indexer.stages.extract.nlp_lexicon import GENITIVE_KINDS, SAINTS, TITLES

_INNER = re.compile(r"(?<=\w)['’]s\s+(?=[A-Z0-9])")
"""The possessive inside a name, before a capitalized word or a number."""
_CUT = re.compile(r"[,;:()\[\]\"“”]")
_LEADING = re.compile(r"^(?:[\"“”'\s]|(?:The|the)\s)+")


def possessive_names(spans: Iterable[str], sentences: Sequence[str]) -> list[str]:
    """Those of the model's `spans` (people left out by the caller) that are names with a
    possessive inside, as the chunk (`sentences`) writes them; each once, in order."""
    found: dict[str, None] = {}
    for span in spans:
        name = _cleaned(span)
        if name is not None and _part_of_the_name(name, sentences):
            found.setdefault(name, None)
    return list(found)


def _cleaned(span: str) -> str | None:
    """The span cut at punctuation and stripped of a leading article or quote; None when it
    then holds no inner possessive or does not open and end as a name does."""
    name = _CUT.split(_LEADING.sub("", span), maxsplit=1)[0].strip()
    words = name.split()
    if not _INNER.search(name) or len(words) < 2:
        return None
    first, last = words[0], words[-1]
    if not (first[:1].isupper() and (last[:1].isupper() or last[:1].isdigit())):
        return None
    opening = first.removesuffix("'s").removesuffix("’s")  # "That's" opens with "That"
    stopword = opening.lower() in ENGLISH_STOPWORDS or last.lower() in ENGLISH_STOPWORDS
    return None if stopword else name


def _part_of_the_name(name: str, sentences: Sequence[str]) -> bool:
    owner = _INNER.split(name, maxsplit=1)[0].split()
    if owner[-1] in GENITIVE_KINDS:
        return "the" not in owner and "The" not in owner
    if len(owner) == 2 and (owner[0] in SAINTS or owner[0] in TITLES):
        return True
    return len(owner) == 1 and not _named_alone(owner[0], sentences)


def _named_alone(word: str, sentences: Sequence[str]) -> bool:
    """Whether the chunk writes `word` somewhere other than before a possessive."""
    alone = re.compile(rf"(?<![\w.'’-]){re.escape(word)}(?![\w'’-])")
    return any(alone.search(sentence) for sentence in sentences)
