"""Titles in quotation marks: a film, a book, a song named in double quotes, as one name.

The name finder reads capitalized runs, which a title's article and small words break
apart: '"The Pit and the Pendulum"' gave no name at all, '"A Night at the Opera"' gave
"Opera", '"The Draughtsman's Contract"' gave "Draughtsman". Text between a pair of double
quotes whose words are written in title case (each word capitalized but the small ones)
is a title, kept whole, the work it names a product. A quotation ('"a return to form"'),
a quoted sentence or an odd number of quotes in the sentence gives nothing.
"""

from __future__ import annotations

import re

from ragstream.indexer.stages.extract.nlp_lexicon import (
    INITIALS,
    NAME_PARTICLES,
    PRODUCT,
    SENTENCE_ABBREVIATIONS,
)
from ragstream.indexer.stages.extract.nlp_spans import Span

MAX_WORDS = 10
_QUOTES = re.compile(r"[\"“”]")
_SMALL_WORDS = NAME_PARTICLES | frozenset(
    {
        *("a", "an", "the", "and", "or", "nor", "but", "for", "in", "on", "at", "to", "by"),
        *("from", "with", "as", "into", "onto", "over", "per", "vs", "vs.", "les", "y", "et"),
    }
)
"""Words a title writes in lowercase: English's small words and the particles of names
("The Pit and the Pendulum", "Lettre de la Mer")."""
_WORD = re.compile(r"^[A-Z0-9\u00c0-\u00de][\w'’.&!?:,-]*$")
_TRAILING = ",.;:"
"""Punctuation a quotation may close over ('"Vertigo," "Psycho."'): not the title's."""


def quoted_titles(sentence: str) -> list[Span]:
    """The titles in double quotes in one sentence, each a span typed product."""
    marks = [m.start() for m in _QUOTES.finditer(sentence)]
    if len(marks) % 2:
        return []  # a quote left open or closed twice: the pairs cannot be told
    spans = []
    for opening, closing in zip(marks[::2], marks[1::2], strict=True):
        inner = sentence[opening + 1 : closing]
        title = inner.strip().rstrip(_TRAILING).rstrip()
        if title and _title_case(title):
            start = opening + 1 + inner.index(title)
            spans.append(Span(title, start, start + len(title), frozenset({PRODUCT})))
    return spans


def _title_case(text: str) -> bool:
    words = text.split()
    if not 0 < len(words) <= MAX_WORDS or words[-1].lower() in _SMALL_WORDS:
        return False
    if not _WORD.match(words[0]) or any(_ends_sentence(w) for w in words[:-1]):
        return False  # a quotation
    return all(w in _SMALL_WORDS or _WORD.match(w) for w in words[1:])


def _ends_sentence(word: str) -> bool:
    """A word closing a sentence: "!", "?", or a period after no abbreviation or initial
    ("Dr. Strangelove" and "J.R.R. Tolkien's Legacy" go on)."""
    if word.endswith(("!", "?")):
        return True
    bare = word.removesuffix(".")
    return bare != word and bare not in SENTENCE_ABBREVIATIONS and not INITIALS.match(bare)
