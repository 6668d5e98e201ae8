"""Proper names in Latin script: capitalized word sequences, codes and versions, and their cues.

A name is a run of capitalized words, acronyms and codes ("Halvorsen Aquatics", "ESIOS",
"KP-70"), optionally with a version ("Skua 3", "Gannet Fleet 5.2"), a letter after a word
("Series C") or "of" after an institution word ("Institute of Ocean Sensing"). A run ends at
punctuation, a lowercase word, a month, a currency code or a possessive. The first word of a
sentence is capitalized anyway, so it is dropped when the chunk also writes it in lowercase
or it is a stopword, and a lone sentence-initial word is kept only when the chunk capitalizes
it elsewhere too. Titles ("Professor", "Dr.") are stripped and mark a person.

Runs inside Chinese text follow the same rules, except that no word there is sentence-initial.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ragstream.common.text.analyzer import ENGLISH_STOPWORDS
from ragstream.indexer.stages.extract import nlp_lexicon as lex
from ragstream.indexer.stages.extract.nlp_evidence import (
    DATE_AFTER,
    DATELINE,
    context,
    intrinsic,
    person_shaped,
)
from ragstream.indexer.stages.extract.nlp_junk import everyday_word
from ragstream.indexer.stages.extract.nlp_kinds import (
    certification,
    glossed_role,
    kind_plural,
    qualifies_occupation,
    role,
)
from ragstream.indexer.stages.extract.nlp_runs import runs, sentence_initial, split_at_of
from ragstream.indexer.stages.extract.nlp_spans import Span
from ragstream.indexer.stages.extract.nlp_tokens import (
    NEXT_LOWERCASE_WORD,
    YEAR,
    Token,
    latin_tokens,
)

_ENDS_NO_NAME = lex.POSTNOMINALS | {"the", "for"}
"""Words a name never ends with: "the", "for", honours after it ("Archibald Gordon CBE")."""
_WORDISH = re.compile(r"\w")
_STOPWORDS = ENGLISH_STOPWORDS | lex.EXTRA_STOPWORDS
_NEVER_ALONE = (lex.DEMONYMS | lex.HEAD_WORDS | lex.BIRTH_MARKERS | lex.DEGREES) - lex.EVENTS_ALONE
"""Words that are no name by themselves: an origin, a name's head, "Née", a degree."""
_ADJECTIVE_ENDINGS = ("ical", "ionist")
"""Endings of adjectives capitalized before their noun ("Ecclesiastical province",
"Expressionist styles"), never a name's alone."""
_PARTICLE_BEFORE = re.compile(rf"\b(?:{'|'.join(sorted(lex.NAME_PARTICLES))}) $")


@dataclass(frozen=True, slots=True)
class ChunkWords:
    """What the whole chunk says about capitalization, for judging sentence-initial words."""

    lowercase: frozenset[str]
    """Words the chunk writes in lowercase."""
    mid_capitalized: frozenset[str]
    """Capitalized words the chunk writes somewhere other than at a sentence start."""
    mainly_lowercase: frozenset[str] = frozenset()
    """Words the chunk writes in lowercase more often than capitalized, wherever ("the
    sarsuela" four times beside "Queen of the Sarsuela")."""

    @classmethod
    def of(cls, sentences: Iterable[str]) -> ChunkWords:
        lowercase: Counter[str] = Counter()
        capitalized: Counter[str] = Counter()
        mid_capitalized: set[str] = set()
        for sentence in sentences:
            for token in latin_tokens(sentence):
                if token.text[0].islower():
                    lowercase[token.text] += 1
                    continue
                capitalized[token.text.lower()] += 1
                if not sentence_initial(sentence, token):
                    mid_capitalized.add(token.text)
        mainly = frozenset(w for w, n in lowercase.items() if n > capitalized[w])
        return cls(frozenset(lowercase), frozenset(mid_capitalized), mainly)


def latin_spans(sentence: str, words: ChunkWords, next_sentence: str = "") -> list[Span]:
    """The Latin-script names of one sentence, with the type evidence of each occurrence.

    `next_sentence` lets a pronoun opening it ("She credited ...") mark the person the
    sentence began with.
    """
    found: list[tuple[Span, bool]] = []
    for run in runs(sentence):
        for part in split_at_of(run, _modifier_after(sentence, run[-1].end)):
            result = _span(part, sentence, words)
            if result is not None:
                found.append(result)
    people = _people(sentence, found, next_sentence)
    return [
        Span(span.name, span.start, span.end, span.evidence | {lex.PERSON})
        if index in people
        else span
        for index, (span, _) in enumerate(found)
    ]


def _people(sentence: str, found: list[tuple[Span, bool]], next_sentence: str) -> set[int]:
    """Person-shaped names that a neighbour makes people: "Fraser McLeish and Mira Okafor"
    share their evidence, and "He"/"She" opening the next sentence marks the first name."""
    people = {i for i, (span, shaped) in enumerate(found) if shaped and lex.PERSON in span.evidence}
    listed = [
        index
        for index in range(len(found) - 1)
        if found[index][1]
        and found[index + 1][1]
        and sentence[found[index][0].end : found[index + 1][0].start] in (" and ", ", ", " or ")
    ]
    for _ in range(2):  # both directions along a list: "A, B and C"
        for index in listed:
            if {index, index + 1} & people:
                people |= {index, index + 1}
    pronoun = next_sentence.split(" ", 1)[0] in lex.PERSON_PRONOUNS
    if found and found[0][1] and pronoun and not _WORDISH.search(sentence[: found[0][0].start]):
        people.add(0)
    return people


def _modifier_after(sentence: str, end: int) -> bool:
    """Whether a lowercase word other than a stopword follows `end` after one space: a noun
    the run's last word qualifies ("Račić family", "Lacon dynasty") or a verb."""
    match = NEXT_LOWERCASE_WORD.match(sentence, end)
    return match is not None and match.group(1) not in _STOPWORDS


def _span(tokens: list[Token], sentence: str, words: ChunkWords) -> tuple[Span, bool] | None:
    """The name of a run, and whether it is shaped like a person's name."""
    initial = sentence_initial(sentence, tokens[0])
    head_of = len(tokens) > 1 and tokens[0].text in lex.OF_HEADS and tokens[1].text == "of"
    common = _common(tokens[0].text, words)
    if initial and tokens[0].kind == "name" and common and not head_of:
        tokens, initial = tokens[1:], False
    elif _opens_quotation(sentence, tokens[0]) and tokens[0].text.lower() in lex.CLAUSE_OPENERS:
        tokens = tokens[1:]  # 'says, "Although Nizar was ...'
    tokens, titled = _untitled(tokens)
    initial = initial and not titled
    while tokens and not _opens_name(tokens):
        tokens = tokens[1:]
    while tokens and _trailing_noise(tokens[-1], sentence):
        tokens = tokens[:-1]
    if not tokens or tokens[-1].end - tokens[0].start < 2:
        return None
    name = sentence[tokens[0].start : tokens[-1].end]
    after = sentence[tokens[-1].end :]
    words_only = [t.text for t in tokens if t.kind != "number"]
    if role(words_only, titled):
        return None
    if len(words_only) == 1 and not _lone_name(tokens, sentence, words, titled, initial):
        return None
    own = intrinsic(tokens)
    shaped = person_shaped(tokens) and not own
    evidence = own | context(tokens, shaped, titled, sentence, after)
    return Span(name, tokens[0].start, tokens[-1].end, frozenset(evidence)), shaped


def _lone_name(
    tokens: list[Token], sentence: str, words: ChunkWords, titled: bool, initial: bool
) -> bool:
    """Whether the one word of a run (beside a number, perhaps) is a name."""
    word = next(t.text for t in tokens if t.kind != "number")
    after = sentence[tokens[-1].end :]
    before = sentence[: tokens[0].start]
    if word in _NEVER_ALONE or certification(word, before) or kind_plural(word, before, after):
        return False
    if glossed_role(after):  # "became Sessho (regent)"
        return False
    # An adjective before its noun: "the Ecclesiastical province", "Expressionist styles"
    if word.endswith(_ADJECTIVE_ENDINGS) and _modifier_after(sentence, tokens[-1].end):
        return False
    # A common word before an occupation qualifies it: "starred Opera singer Lina Cavalieri"
    if qualifies_occupation(word, after):
        return False
    # "Formed", "Disbanded", "Away" of "Home and Away"; after a title, a surname ("Mr Young"),
    # but not after a particle ("Prince du Sang")
    if everyday_word(word) and (not titled or _PARTICLE_BEFORE.search(before)):
        return False
    # A lone capitalized word opening a sentence, or a label ("Finding 1:"), is a name
    # only if the chunk capitalizes it elsewhere too (or it opens a dateline).
    label = len(tokens) == 2 and after.startswith(":")
    lone_initial = initial and (len(tokens) == 1 or label) and not _code(word)
    return not lone_initial or word in words.mid_capitalized or bool(DATELINE.match(after))


def _untitled(tokens: list[Token]) -> tuple[list[Token], bool]:
    """The run without the titles before the name, and whether there were any. An office's
    title and the one common word after it are a name of their own (a company's, a role's),
    not a title before a person's name: "General Motors", "Prince Aviation", "Chief Editor";
    never after an honorific ("Mr Young"). So is a title before words that end as a place's,
    an organization's or an event's name ("Prince Edward Island", "Queen Elizabeth
    Hospital"). An origin before the title goes with it ("German Chancellor Angela Merkel",
    "U.S. President Theodore Roosevelt"), as do the words that qualify it ("Prime Minister
    Tony Blair", lex.TITLE_QUALIFIERS)."""
    origin = bool(tokens) and tokens[0].text in lex.ORIGINS
    begun = 1 if origin and _after_title(tokens, 1) > 1 else 0
    start = _after_title(tokens, begun)
    if start == begun:
        return tokens, False
    rest = tokens[start:]
    worded = any(token.kind in ("name", "letter") for token in rest)
    # A version number leaves a title a title, and so does a person's name after it.
    if worded and intrinsic(rest) - {lex.PRODUCT, lex.PERSON}:
        return tokens, False  # "Prince Edward Island", "General Motors Company": a title opens it
    if len(rest) == 1 and rest[0].kind == "name" and tokens[start - 1].text not in lex.HONORIFICS:
        word = rest[0].text
        if word in lex.HEAD_WORDS or everyday_word(word):
            return tokens[start - 1 :], False
    return rest, True


def _after_title(tokens: list[Token], start: int) -> int:
    """Where the title opening `tokens[start:]` ends: after its qualifiers and titles
    ("Prime Minister", "Vice President"); `start` when no title opens them."""
    end = start
    while end < len(tokens) and tokens[end].text in lex.TITLE_QUALIFIERS:
        end += 1
    titles = end
    while end < len(tokens) and tokens[end].text in lex.TITLES:
        end += 1
    return end if end > titles else start


def _opens_name(tokens: list[Token]) -> bool:
    """A name's first token: a word, or initials before one ("H. G. Wells")."""
    first = tokens[0]
    if first.kind == "letter":
        return any(t.kind == "name" for t in tokens[1:])
    return first.kind == "name"


def _trailing_noise(token: Token, sentence: str) -> bool:
    """A particle, a year, the day of a date ("Published 30 April") or an honour after a
    name ("Archibald Gordon CBE") ends no name."""
    if token.kind == "particle" or token.text in _ENDS_NO_NAME or YEAR.match(token.text):
        return True
    return token.kind == "number" and bool(DATE_AFTER.match(sentence[token.end :]))


_QUOTATION_OPENS = re.compile(r"(?:^|[\s,:])[\"“]\s?$")
"""An opening double quote just before, after a space, a comma, a colon or nothing."""


def _opens_quotation(sentence: str, token: Token) -> bool:
    """The first word of a quotation ('says, "Although ...'), capitalized as a sentence's is."""
    return bool(_QUOTATION_OPENS.search(sentence[: token.start]))


def _common(word: str, words: ChunkWords) -> bool:
    """A capitalized everyday word: a stopword, or a word the chunk also writes in lowercase."""
    lower = word.lower()
    capitalized = word[0].isupper() and not any(char.isupper() for char in word[1:])
    return capitalized and (lower in _STOPWORDS or lower in words.lowercase)


def _code(word: str) -> bool:
    """An acronym or a code: capitalized everywhere sentence position or not."""
    return any(char.isdigit() for char in word) or (len(word) > 1 and word.isupper())
