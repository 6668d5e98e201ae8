"""Sentences of a chunk, for co-occurrence: the NLP extractor relates what one sentence names.

Line breaks inside a paragraph are wrapping, not boundaries ("Ingrid\\nHalvorsen" is one
name), and so is a space after a word's last hyphen when either side is capitalized: a
compound broken at a line's end, or spaced so by the text's source ("Saint- Pol",
"Al- Fawzan", "Bronx- born" are "Saint-Pol", "Al-Fawzan", "Bronx-born"), as is a space
before a hyphen between a capitalized word and a lowercase one ("Nam Sang -mi"). Blank lines,
markdown headings (a block of their own), list items, "Field: value" header lines and lines
ending in Chinese text start a new block. Inside a block, Chinese terminators (。！？；)
always end a sentence; a Latin ., ! or ? ends one when whitespace follows and the word
before it is not an abbreviation ("Dr.", "e.g.") or an initial ("J.").
"""

from __future__ import annotations

import re

from ragstream.indexer.stages.extract.nlp_lexicon import INITIALS, SENTENCE_ABBREVIATIONS

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_BLOCK_START = re.compile(r"^(?:#{1,6}\s|[-*+>]\s|\d{1,3}[.)]\s|[A-Z][A-Za-z ]{0,24}:\s)")
_LINE_MARKUP = re.compile(r"^(?:#{1,6}\s*|[-*+>]\s+|\d{1,3}[.)]\s+)")
_EMPHASIS = re.compile(r"\*\*|__|`")
_ENDS_CJK = re.compile(rf"[{_HAN}。！？；：，、）」』”]$")
_BOUNDARY = re.compile(r"[。！？；]+[”’」』）)\"']*|[.!?]+[”’\"')\]]*(?=\s|$)")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_BROKEN_HYPHEN = re.compile(r"\b([^\W\d_])[\w'’]*- (?=([^\W\d_]))")
"""A word's end hyphen, a space, and the next word's first letter (not consumed: chains)."""
_SPACED_HYPHEN = re.compile(r"\b([A-Z][\w'’]*) -(?=[a-z]+\b(?!['’]))")
"""A capitalized word, a space, and a hyphen joined to a lowercase word ("Sang -mi")."""


def split_sentences(text: str) -> list[str]:
    """The sentences of `text` in order, whitespace-normalized, markdown marks removed."""
    sentences: list[str] = []
    for block in _blocks(text):
        sentences.extend(_split_block(block))
    return sentences


def _blocks(text: str) -> list[str]:
    blocks: list[list[str]] = []
    current: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            current = []
            continue
        if current and (_BLOCK_START.match(line) or _ENDS_CJK.search(current[-1])):
            current = []
        if not current:
            blocks.append(current)
        current.append(_EMPHASIS.sub("", _LINE_MARKUP.sub("", line)))
        if line.startswith("#"):
            current = []  # a heading is a block of its own: the next line is not its sentence
    return [_join_hyphens(" ".join(" ".join(lines).split())) for lines in blocks if lines]


def _join_hyphens(block: str) -> str:
    """`block` with each broken compound joined, when a side of it is capitalized: a
    lowercase pair ("inter- national", "pre- and post-war") may be a word or a suspended
    hyphen, and names no name either way."""
    return _BROKEN_HYPHEN.sub(_joined, _SPACED_HYPHEN.sub(r"\1-", block))


def _joined(match: re.Match[str]) -> str:
    whole = match.group()
    if match.group(1).isupper() or match.group(2).isupper():
        return whole[:-1]
    return whole


def _split_block(block: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(block):
        if match.group()[0] in ".!?" and _continues(block, match.start()):
            continue
        sentence = block[start : match.end()].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end()
    rest = block[start:].strip()
    if rest:
        sentences.append(rest)
    return sentences


def _continues(block: str, period: int) -> bool:
    """True when a Latin period at `period` is an abbreviation's or an initial's."""
    if block[period] != ".":
        return False
    word = _WORD_BEFORE.search(block[:period])
    if word is None:
        return False
    text = word.group(1)
    return text in SENTENCE_ABBREVIATIONS or INITIALS.match(text) is not None
