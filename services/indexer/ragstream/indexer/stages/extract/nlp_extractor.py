"""The LLM-free extractor: proper names and co-occurrence, in the spirit of LazyGraphRAG.

Entities are the names nlp_english and nlp_chinese find, typed by the strongest evidence the
chunk gives (see nlp_spans.resolve_types). Every sentence is then scanned for every name of
the chunk, longest first, so "Tern" in "the Tern sensor team" counts once the chunk names it.
Two entities named close together in one sentence (see RELATION_WINDOW) are related: the
relation's weight is the number of such sentences in the chunk, its description those
sentences (one per line), and its keywords the most frequent content words of those sentences
outside the names. An entity's description is the first sentences that name it (one per
line). Deterministic, offline, and fast enough to run per chunk.

Encyclopedic text names its subject in a title line and then refers to it by pronoun: a
title (a first line without terminal punctuation, short, capitalized) that the chunk
names again is an entity, and a sentence opening with "He", "She", "It" or their
possessives counts as naming the chunk's first entity too.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, field

from ragstream.common.models import relation_key
from ragstream.common.text.analyzer import ENGLISH_STOPWORDS
from ragstream.common.text.names import name_pattern
from ragstream.indexer.stages.extract.names import entity_key
from ragstream.indexer.stages.extract.nlp_chinese import (
    han_spans,
    han_tokens,
    han_words,
    repeated_nouns,
)
from ragstream.indexer.stages.extract.nlp_countries import country_types
from ragstream.indexer.stages.extract.nlp_english import ChunkWords, latin_spans
from ragstream.indexer.stages.extract.nlp_junk import junk_name, split_remnant
from ragstream.indexer.stages.extract.nlp_lexicon import (
    CONCEPT,
    EXTRA_STOPWORDS,
    ORGANIZATION,
    PERSON,
    SUBJECT_PRONOUNS,
    TITLES,
)
from ragstream.indexer.stages.extract.nlp_lists import listed_types
from ragstream.indexer.stages.extract.nlp_model import (
    GROUP,
    NOT_A_NAME,
    NameTagger,
    apply_votes,
    model_votes,
    not_names,
    voted_types,
)
from ragstream.indexer.stages.extract.nlp_possessive import possessive_names
from ragstream.indexer.stages.extract.nlp_spans import alias_pairs, non_overlapping, resolve_types
from ragstream.indexer.stages.extract.nlp_subject import subject_type
from ragstream.indexer.stages.extract.nlp_title_line import (
    DISAMBIGUATION,
    named_person,
    qualifier_type,
    surnamed,
    title_event,
    title_line,
)
from ragstream.indexer.stages.extract.nlp_titles import quoted_titles
from ragstream.indexer.stages.extract.records import (
    ExtractedEntity,
    ExtractedRelation,
    ExtractionResult,
)
from ragstream.indexer.stages.extract.sentences import split_sentences

ENTITY_SENTENCES = 3
"""Sentences quoted in an entity's description."""
RELATION_SENTENCES = 5
"""Sentences quoted in a relation's description (the weight still counts all of them)."""
RELATION_KEYWORDS = 5
RELATION_WINDOW = 2
"""A name is related to the next this-many names of its sentence: nearby names are the likely
related ones, and a sentence listing n names gives about 2n relations, not n²/2 (each
relation is embedded, so this bounds indexing cost too)."""

_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[a-z]")
_STOPWORDS = ENGLISH_STOPWORDS | EXTRA_STOPWORDS
_NOT_NAMES = frozenset(word.lower() for word in _STOPWORDS | TITLES)
"""Words that, before a capitalized word, show it is not the rest of a longer name."""
_CONNECTORS = frozenset({"of", "the", "and", "&", "for", "de"})
"""Words inside a name that join its parts: a name is never split right after one."""


class NLPExtractor:
    """The offline default extractor (no LLM, no network); `tagger`, when given, is the
    trained model that types the names (nlp_model.load_tagger)."""

    def __init__(self, tagger: NameTagger | None = None) -> None:
        self._tagger = tagger

    @property
    def name(self) -> str:
        return "nlp"

    async def extract(self, text: str) -> ExtractionResult:
        # jieba, the regexes and the model are CPU work: keep the event loop free.
        return await asyncio.to_thread(extract_offline, text, self._tagger)


@dataclass
class _Names:
    """The names a chunk mentions: spelling per key, type evidence, aliases."""

    words: ChunkWords
    """What the chunk says about capitalization (words it writes in lowercase, and mainly so)."""
    spelling: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, frozenset[str]] = field(default_factory=dict)
    aliases: list[tuple[str, str]] = field(default_factory=list)
    variants: dict[str, str] = field(default_factory=dict)
    """Every spelling seen -> its key."""
    title: str | None = None
    """The key of the chunk's title line, when it names the chunk's subject."""


@dataclass
class _Pair:
    sentences: list[int] = field(default_factory=list)


def extract_offline(text: str, tagger: NameTagger | None = None) -> ExtractionResult:
    """Entities and co-occurrence relations of one chunk; the same text gives the same result.

    With a `tagger`, a name the rules leave untyped takes the type the model gives it most
    often in the chunk, and one the model does not take for a name is dropped (see
    nlp_model.not_names), unless it is the chunk's title: the subject of the passage.
    """
    sentences = split_sentences(text)
    names = _discover(sentences, text.strip().split("\n", 1)[0].strip())
    tags = tagger.tag(sentences) if tagger is not None and names.spelling else None
    if tags is not None:
        spans = [t.name for t in tags if t.entity_type not in (NOT_A_NAME, GROUP, PERSON)]
        _adopt(names, possessive_names(spans, sentences))
    types = resolve_types(names.spelling, names.evidence, names.aliases)
    votes = model_votes(tags or ())
    if tags is not None:
        dropped = not_names(
            names.spelling,
            names.evidence,
            votes,
            names.words.lowercase,
            names.words.mainly_lowercase,
        )
        _drop(names, [key for key in dropped if key != names.title])
        # A name the rules read as a concept (an honour's) takes no type from the model.
        typed_by_model = {
            k: v for k, v in votes.items() if CONCEPT not in names.evidence.get(k, ())
        }
        types = apply_votes(types, typed_by_model)
    if not names.spelling:
        return ExtractionResult()
    matcher = _matcher(names.variants)
    evidenced = {key for key, kinds in names.evidence.items() if kinds}
    types |= listed_types(sentences, matcher, names.variants, types, evidenced)
    types |= country_types(names.spelling, types)
    voted = voted_types(votes)  # "Jarlskog" over "Cecilia Jarlskog"; "Johannes Brahms's own"
    for key, spelling in names.spelling.items():
        titled = key == names.title and named_person(spelling, types)
        surname = CONCEPT not in names.evidence.get(key, ()) and surnamed(spelling, voted)
        if types[key] == CONCEPT and (titled or surname):
            types[key] = PERSON
    mentions = _scan(sentences, matcher, names)
    seen: dict[str, list[int]] = {}
    for index, keys in enumerate(mentions):
        for key in keys:
            seen.setdefault(key, []).append(index)
    entities = tuple(
        ExtractedEntity(
            names.spelling[key],
            types[key],
            "\n".join(sentences[i] for i in indexes[:ENTITY_SENTENCES]),
        )
        for key, indexes in seen.items()
    )
    relations = _relations(sentences, mentions, matcher, names)
    return ExtractionResult(entities=entities, relations=relations)


def _discover(sentences: Sequence[str], first_line: str) -> _Names:
    words = ChunkWords.of(sentences)
    tokens = [han_tokens(sentence) for sentence in sentences]
    repeated = repeated_nouns(tokens)
    names = _Names(words)
    following = [*sentences[1:], ""][: len(sentences)]
    for sentence, sentence_tokens, after in zip(sentences, tokens, following, strict=True):
        spans = non_overlapping(
            [
                *quoted_titles(sentence),  # first: a title wins over a run of its words
                *latin_spans(sentence, words, after),
                *han_spans(sentence, sentence_tokens, repeated),
            ]
        )
        for span in spans:
            key = entity_key(span.name)
            names.spelling.setdefault(key, span.name)
            names.variants.setdefault(span.name, key)
            _add_evidence(names, key, span.evidence)
        names.aliases.extend(
            (entity_key(a), entity_key(b)) for a, b in alias_pairs(sentence, spans)
        )
    line = title_line(sentences, first_line)
    title = line.name if line is not None else None
    if line is not None:
        key = entity_key(line.name)
        names.spelling[key] = line.name
        names.variants[line.name] = key
        kind = qualifier_type(line.name) or title_event(line.name)
        _add_evidence(names, key, {kind} if kind else set())
        head = line.head
        if head is not None and entity_key(head) != key:
            # "Redmond" of "Redmond, Utah": how the passage names its subject
            evidence = names.evidence.get(entity_key(head), frozenset())
            _drop(names, [entity_key(head)])
            _add_evidence(names, key, evidence)
            names.variants[head] = key
    _define_subject(names, sentences, title)
    _split_compounds(names)
    _drop(names, [key for key, spelling in names.spelling.items() if junk_name(spelling)])
    remnants = [
        key
        for key, spelling in names.spelling.items()
        if key != names.title and split_remnant(spelling, sentences, _NOT_NAMES)
    ]
    _drop(names, remnants)
    return names


def _adopt(names: _Names, spellings: Iterable[str]) -> None:
    """Adds names the rules missed; where the chunk writes one, the scan reads it, longest
    first, instead of the parts the rules found inside it."""
    for spelling in spellings:
        key = entity_key(spelling)
        names.spelling.setdefault(key, spelling)
        names.variants.setdefault(spelling, key)


def _add_evidence(names: _Names, key: str, kinds: Set[str]) -> None:
    names.evidence[key] = names.evidence.get(key, frozenset()) | kinds


def _drop(names: _Names, keys: Iterable[str]) -> None:
    for key in set(keys):
        names.spelling.pop(key, None)
        names.evidence.pop(key, None)
    names.variants = {s: k for s, k in names.variants.items() if k in names.spelling}


def _define_subject(names: _Names, sentences: Sequence[str], title: str | None) -> None:
    """Marks the chunk's subject, the title line when it is a name ("Gregory Teu" over
    "Gregory George Teu (born 1951) is a Tanzanian politician"), typed by the sentence
    that defines it (nlp_subject)."""
    if len(sentences) < 2:
        return
    key = entity_key(title if title is not None else sentences[0])
    if key not in names.spelling:
        return
    # A title ending in "?" or "!" ends its line's sentence before its parenthesis ("It's
    # Alive!" | "(1974 film)") and the sentence that opens with it: "What's New, Mr. Magoo?"
    # | "is an American animated television series"; "Boy or Girl?" | "( Spanish: ¿ Chico o
    # chica?)" | "is a 1962 Mexican- Spanish musical comedy film".
    body = sentences[2:] if DISAMBIGUATION.fullmatch(" " + sentences[1]) else sentences[1:]
    definition = body[0] if body else ""
    if title is not None and definition == title:
        definition = " ".join(body[:3])
    kind = subject_type(definition)
    _add_evidence(names, key, {kind} if kind else set())
    names.title = key


def _split_compounds(names: _Names) -> None:
    """Splits a name made of two names the chunk also writes on their own.

    Chinese text sets Latin names side by side ("Halvorsen Aquatics Tern 传感器团队") and
    English text runs them together ("In mainland China Gannet Fleet is hosted"), which reads
    as one run of capitalized words; the parts named separately elsewhere show the seam.
    After an organization's name, any capitalized rest is split off, and before a known name
    of two or more words any head is. The chunk's title is never split: it names the
    passage's subject ("Dodge City Legend", though the chunk also writes "Dodge City" and
    "the Legend").
    """
    organizations = [
        spelling
        for spelling, key in names.variants.items()
        if ORGANIZATION in names.evidence.get(key, frozenset()) and " " in spelling
    ]
    for spelling in list(names.variants):
        rest = _known_rest(spelling, names.variants, organizations)
        if rest is None or names.variants[spelling] == names.title:
            continue
        key = names.variants.pop(spelling)
        if key not in names.variants.values():
            names.spelling.pop(key, None)
            names.evidence.pop(key, None)
        rest_key = entity_key(rest)
        names.spelling.setdefault(rest_key, rest)
        names.variants.setdefault(rest, rest_key)


def _known_rest(spelling: str, known: dict[str, str], organizations: list[str]) -> str | None:
    """What follows a known first part of `spelling`, when the split is justified."""
    words = spelling.split(" ")
    for cut in range(1, len(words)):
        if words[cut - 1] in _CONNECTORS:  # "Journal of | Small Business Management"
            continue
        head, rest = " ".join(words[:cut]), " ".join(words[cut:])
        both_known = head in known and rest in known
        after_organization = head in organizations and rest[:1].isupper()
        known_phrase_after = rest in known and " " in rest  # never splits a person's surname off
        if both_known or after_organization or known_phrase_after:
            return rest
    return None


def _scan(sentences: Sequence[str], matcher: re.Pattern[str], names: _Names) -> list[list[str]]:
    """Per sentence, the keys of the names it contains (`matcher` finds their spellings), in
    order, each once; a sentence opening with a subject pronoun names the chunk's first
    entity first."""
    found: list[list[str]] = []
    subject: str | None = None
    for sentence in sentences:
        keys: dict[str, None] = {}
        if subject is not None and sentence.split(" ", 1)[0] in SUBJECT_PRONOUNS:
            keys[subject] = None
        for match in matcher.finditer(sentence):
            keys.setdefault(names.variants[match.group()], None)
        found.append(list(keys))
        if subject is None and keys:
            subject = next(iter(keys))
    return found


def _matcher(spellings: Iterable[str]) -> re.Pattern[str]:
    """Leftmost, then longest: "Tern S3.1" before "Tern S3" before "Tern"."""
    # "(?!\.\d)": "Tern S3" is not the start of "Tern S3.1".
    patterns = [
        name_pattern(s, after=r"(?!\.\d)") for s in sorted(spellings, key=len, reverse=True)
    ]
    return re.compile("|".join(patterns))


def _relations(
    sentences: Sequence[str],
    mentions: Sequence[Sequence[str]],
    matcher: re.Pattern[str],
    names: _Names,
) -> tuple[ExtractedRelation, ...]:
    pairs: dict[str, tuple[str, str, _Pair]] = {}
    for index, keys in enumerate(mentions):
        for first, second in _nearby_pairs(keys):
            key = relation_key(first, second)
            if key not in pairs:
                pairs[key] = (first, second, _Pair())
            pairs[key][2].sentences.append(index)
    content = [_content_words(sentence, matcher) for sentence in sentences]
    relations = []
    for first, second, pair in pairs.values():
        counts = Counter(word for index in pair.sentences for word in content[index])
        keywords = [word for word, _ in counts.most_common(RELATION_KEYWORDS)]
        relations.append(
            ExtractedRelation(
                source=names.spelling[first],
                target=names.spelling[second],
                keywords=", ".join(keywords),
                description="\n".join(sentences[i] for i in pair.sentences[:RELATION_SENTENCES]),
                weight=float(len(pair.sentences)),
            )
        )
    return tuple(relations)


def _nearby_pairs(keys: Sequence[str]) -> list[tuple[str, str]]:
    return [
        (keys[i], keys[j])
        for i in range(len(keys))
        for j in range(i + 1, min(len(keys), i + 1 + RELATION_WINDOW))
    ]


def _content_words(sentence: str, names: re.Pattern[str]) -> list[str]:
    """Salient words of a sentence outside its names: lowercase English words that are not
    stopwords, and Chinese words of two or more ideographs."""
    rest = names.sub(" ", sentence)
    latin = [
        word.lower()
        for word in _LATIN_WORD.findall(rest)
        if len(word) > 2 and word.lower() not in _STOPWORDS
    ]
    return latin + han_words(rest)
