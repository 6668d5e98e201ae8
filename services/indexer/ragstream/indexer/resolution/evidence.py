"""Same-as evidence found in one chunk (pure functions), and its ledger rows.

Stage 1 records it with the chunk's mentions, so it is deleted with the chunk and stage 2
sees only the evidence present. The rules, safest first:
- `name`: a name and its folded form (`common.text.fold.fold`): case, diacritics, hyphens and
  punctuation, a legal suffix. The folded form is a key of its own, so every spelling of
  one name meets there whether or not the chunks that write them ever meet. So do its
  short forms written out ("U.S. Army", "War& Peace"), and a title of two words or more
  after a leading article meets its form without it (`fold.unprefixed_fold`: "The Bedford
  Incident" / "Bedford Incident", "A Night of Mystery" / "Night of Mystery").
- `plural`: a name and its singular (`fold.singular_fold`: "sensors" / "sensor", "BAFTAs"
  / "bafta"; `fold.head_singular_fold`: "Academy Awards for Best Actor" / "academy award
  for best actor"); stage 2 accepts it only between names both written in lowercase, or
  both of several words and neither typed person, or an acronym and its plural.
- `abbreviation`: "Full Name (ABBR)" or "ABBR (Full Name)" in the text, the initials
  matching.
- `short_name`: a person's surname or given name used alone after the full name in the
  chunk, or a royal's name without the place after "of" ("Henry VIII" after "Henry VIII of
  England", "Archduke Anton" after "Archduke Anton of Austria"); weak: stage 2 follows it
  only when it points at one full name ("Henry VIII" of England and of Legnica stay apart).
- `cjk`: two CJK names of the chunk with nearly the same characters (`fold.cjk_similar`).
- `gloss`: a Chinese name followed by its Latin name in parentheses, the way Chinese text
  introduces a foreign or translated name: 卑尔根（Bergen）, 东海海洋感知研究所（East China
  Sea Institute of Ocean Sensing，简称 ESIOS） (each name of the parentheses).
- `pinyin`: a Chinese name of two to four ideographs and its pinyin spellings
  (`pinyin.spellings`: 宁波 / "ningbo", 周明哲 / "zhou mingzhe"); the spelling is a key of
  its own, so the name meets the Latin entity of that key in any document. Stage 2 follows
  it only between live entities, one Chinese name to one Latin one (homophones stay apart).
- `country`: a country's Chinese name and its English names (`countries.english_names`:
  挪威 / Norway, 中国 / China).
- `demonym`: a name not typed person or place and the place names it may be the demonym
  of (`fold.demonym_bases`: "South African" / "south africa", "Kuwaiti" / "kuwait");
  stage 2 follows it only to a live entity typed location, one place per demonym.

Three more rules meet at blocking keys (`BLOCK_MARK`, no entity key holds it), and stage 2
pairs the live entities of a block (`blocks.block_pairs`):
- `order`: the words of a name in any order, connectors dropped ("Treaty of Versailles" /
  "Versailles Treaty"); names typed person are left out ("Samuel Taylor Coleridge" and
  "Samuel Coleridge-Taylor" are two people).
- `middle`: a person's first and last name ("Paul Stevens" / "Paul David Stevens"), also
  of an untyped name written as a person's ("Persis S. Drell"); weak: a shorter name joins
  the one longer name that holds its words, both typed person, or one and a middle initial
  in either. A name ending in a regnal number or Jr./Sr. has none ("Charles II" / "Charles
  Emmanuel II").
- `document_name`: a surname or given name used alone anywhere in the document of a full
  name typed person ("Halvorsen" in the fourth chunk, "Ingrid Halvorsen" in the first);
  weak, as `short_name`. The block is the document's, so it goes with its chunks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragstream.common.derive import FALLBACK_TYPES
from ragstream.common.models import Chunk, Mention, MentionKind, entity_key, same_as_key
from ragstream.common.text.fold import (
    abbreviation_letters,
    acronyms,
    cjk_similar,
    compact,
    demonym_bases,
    expanded_fold,
    fold,
    head_singular_fold,
    is_cjk,
    joined_words,
    singular_fold,
    unprefixed_fold,
    word_set,
)
from ragstream.common.text.names import name_pattern
from ragstream.indexer.resolution import countries, pinyin

STRONG = frozenset({"name", "plural", "abbreviation", "cjk", "gloss", "country", "order"})
WEAK = frozenset({"short_name", "middle", "document_name"})
TRANSLITERATION = frozenset({"pinyin"})
DERIVED = frozenset({"demonym"})
"""Rules whose partner key is a guess that counts only where a live entity of that key is."""
BLOCKED = frozenset({"order", "middle", "document_name"})
"""Rules whose evidence links an entity to a blocking key, not to another entity."""
BLOCK_MARK = "\u241e"
_SUCCESSION = re.compile(
    r"(?=[IVXLCDM])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})|[JS]r\.?"
)

_PAREN_ABBR = re.compile(r"\(\s*([A-Z][A-Za-z0-9&.]{1,11})\s*\)")
_ABBR_PAREN = re.compile(r"(?<![\w.])([A-Z][A-Z0-9&.]{1,11})\s*\(([^()]{3,120})\)")
_WORD = re.compile(r"[^\W_][\w&'.-]*")
_INITIAL = re.compile(r"[A-Z]\.")
PERSON_OR_UNTYPED = frozenset({"person", *FALLBACK_TYPES})
"""Types a person's name may carry: person, or none the evidence gave."""
_GLOSS = r"\s*[（(]((?:[^（）()\u3400-\u9fff]|简称|下称|又称|英文名){2,160})[）)]"
"""Parentheses right after a Chinese name, holding no ideograph but a "short form" marker."""
_GLOSS_PARTS = re.compile(r"\s*[，,、;；]\s*(?:简称|下称|又称|英文名)?\s*")
_LATIN_NAME = re.compile(r"[A-Z][A-Za-z0-9&'.\- ]{1,79}")
_CJK_LEGAL = "(?:股份有限公司|有限公司|公司|集团)?"


@dataclass(frozen=True, slots=True, order=True)
class SameAs:
    """Two entity keys the chunk says are one thing, and the rule that says so."""

    a: str
    b: str
    rule: str


def found_in(text: str, entities: Sequence[Mention]) -> list[SameAs]:
    """Every piece of evidence in one chunk, each pair once, sorted."""
    names = sorted({m.name: m.type for m in entities if m.name}.items())
    found = [
        *_folded(names),
        *_abbreviations(text),
        *_short_names(text, names),
        *_cjk(names),
        *_pinyin(names),
        *_countries(names),
        *_demonyms(names),
        *_glosses(text, names),  # after pinyin: a pair both give is a gloss
        *_blocks(text, names, entities[0].doc_id if entities else ""),
    ]
    unique = {_pair(s.a, s.b): s.rule for s in found if s.a and s.b and s.a != s.b}
    return sorted(SameAs(a, b, rule) for (a, b), rule in unique.items())


def _pair(a: str, b: str) -> tuple[str, str]:
    first, second = sorted((a, b))
    return first, second


def _folded(names: list[tuple[str, str]]) -> list[SameAs]:
    found: list[SameAs] = []
    for name, _ in names:
        key = entity_key(name)
        found.append(SameAs(key, fold(name), "name"))
        found.append(SameAs(key, compact(name), "name"))
        found.append(SameAs(key, joined_words(name), "name"))
        found.append(SameAs(key, singular_fold(name), "plural"))
        found.append(SameAs(key, head_singular_fold(name), "plural"))
        found.append(SameAs(key, expanded_fold(name), "name"))
        found.append(SameAs(key, unprefixed_fold(name), "name"))
    return found


def block(rule: str, *parts: str) -> str:
    return " ".join((f"{BLOCK_MARK}{rule}", *parts))


def is_block(key: str) -> bool:
    return key.startswith(BLOCK_MARK)


def _blocks(text: str, names: list[tuple[str, str]], doc_id: str) -> list[SameAs]:
    found: list[SameAs] = []
    for name, type_ in names:
        key = entity_key(name)
        words = fold(name).split()
        if type_ != "person" and (ordered := word_set(name)):
            found.append(SameAs(key, block("order", ordered), "order"))
        if _person_like(name, type_) and 2 <= len(words) <= 5 and not _numbered(name):
            found.append(SameAs(key, block("middle", words[0], words[-1]), "middle"))
        for short in _document_names(text, name, type_, words):
            found.append(SameAs(key, block("document_name", doc_id, short), "document_name"))
    return found


def _person_like(name: str, type_: str) -> bool:
    """Typed person, or untyped and written as a person's name is: capitalized words and
    initials ("Persis S. Drell"); stage 2 pairs it only with a name typed person, and only
    when a middle initial is in one of the two (`blocks.block_pairs`)."""
    if type_ == "person":
        return True
    parts = name.split()
    return type_ in FALLBACK_TYPES and all(_is_name_word(w) or _INITIAL.fullmatch(w) for w in parts)


def _numbered(name: str) -> bool:
    """A CJK name, or one ending in a regnal number or a generation ("Charles II", "John
    George I", "Martin Luther King Jr."): "Charles II" is no "Charles Emmanuel II" without
    his middle name, but another man."""
    return is_cjk(name) or bool(_SUCCESSION.fullmatch(name.rsplit(maxsplit=1)[-1]))


def _document_names(text: str, name: str, type_: str, words: list[str]) -> list[str]:
    """The words a name offers to its document's other names: a full name typed person its
    first and last word; a lone capitalized word typed person or untyped, itself, unless
    the chunk also uses it as a common word."""
    parts = name.split()
    if type_ == "person" and 2 <= len(parts) <= 3 and all(map(_is_name_word, parts)):
        return [words[0], words[-1]]
    lone = len(parts) == 1 and _is_name_word(name) and type_ in PERSON_OR_UNTYPED
    if lone and not re.search(name_pattern(name.lower()), text):
        return words
    return []


def _abbreviations(text: str) -> list[SameAs]:
    found: list[SameAs] = []
    for match in _PAREN_ABBR.finditer(text):
        letters = abbreviation_letters(match.group(1))
        words = _WORD.findall(text[max(0, match.start() - 200) : match.start()])
        full = _trailing_expansion(words, letters)
        if full:
            found.append(SameAs(entity_key(full), entity_key(match.group(1)), "abbreviation"))
    for match in _ABBR_PAREN.finditer(text):
        abbr, inside = match.group(1), match.group(2).strip()
        if abbreviation_letters(abbr) in acronyms(_WORD.findall(inside)):
            found.append(SameAs(entity_key(inside), entity_key(abbr), "abbreviation"))
    return found


def _trailing_expansion(words: list[str], letters: str) -> str:
    """The shortest run of words ending right before "(ABBR)" whose initials are ABBR and
    which starts with a capital: "... by International Business Machines (IBM)"."""
    if not 2 <= len(letters) <= 10:
        return ""
    for start in range(len(words) - 1, max(-1, len(words) - 3 * len(letters) - 1), -1):
        run = words[start:]
        initials = acronyms(run)
        if letters in initials and run[0][0].isupper():
            return " ".join(run)
        if min(len(i) for i in initials) > len(letters):
            break
    return ""


def _short_names(text: str, names: list[tuple[str, str]]) -> list[SameAs]:
    """A short form of a full name typed person used alone after it (`_short_forms`); the
    short name typed person or untyped, and no common word (never written in lowercase in
    the chunk). Untyped full names are left out: "Tug Hill" / "Hill" and "Santa Monica" /
    "Monica" look like persons to these rules alone."""
    types = dict(names)
    return [
        SameAs(entity_key(short), entity_key(full), "short_name")
        for full, type_ in names
        if type_ == "person"
        for short in _short_forms(full)
        if types.get(short, "") in PERSON_OR_UNTYPED and _used_alone_after(text, short, full)
    ]


def _short_forms(full: str) -> tuple[str, ...]:
    """The surname and the given name of two or three capitalized words of letters (no
    initials, connectors or digits), or the name of several words before "of" and a place
    ("Henry VIII" of "Henry VIII of England")."""
    before_of = full.split(" of ", 1)[0]
    if before_of != full:
        return (before_of,) if len(before_of.split()) > 1 else ()
    words = full.split()
    if not 2 <= len(words) <= 3 or not all(map(_is_name_word, words)):
        return ()
    return words[0], words[-1]


def _is_name_word(word: str) -> bool:
    return len(word) > 1 and word.isalpha() and word[0].isupper() and not word.isupper()


def _used_alone_after(text: str, short: str, full: str) -> bool:
    if re.search(name_pattern(short.lower()), text):
        return False  # also a common word in this chunk
    first = text.find(full)
    if first < 0:
        return False
    inside = [(m.start(), m.end()) for m in re.finditer(re.escape(full), text)]
    return any(
        m.start() > first and not any(s <= m.start() < e for s, e in inside)
        for m in re.finditer(name_pattern(short), text)
    )


def _cjk(names: list[tuple[str, str]]) -> list[SameAs]:
    keys = sorted({fold(name) for name, _ in names if is_cjk(name)})
    return [
        SameAs(a, b, "cjk") for i, a in enumerate(keys) for b in keys[i + 1 :] if cjk_similar(a, b)
    ]


def _glosses(text: str, names: list[tuple[str, str]]) -> list[SameAs]:
    found: list[SameAs] = []
    for name, _ in names:
        if not is_cjk(name):
            continue
        for match in re.finditer(re.escape(name) + _CJK_LEGAL + _GLOSS, text):
            for part in _GLOSS_PARTS.split(match.group(1).strip()):
                latin = part.strip()
                if _LATIN_NAME.fullmatch(latin) and not latin.isdigit():
                    found.append(SameAs(entity_key(name), entity_key(latin), "gloss"))
    return found


def _countries(names: list[tuple[str, str]]) -> list[SameAs]:
    return [
        SameAs(entity_key(name), english, "country")
        for name, _ in names
        if is_cjk(name)
        for english in countries.english_names(name)
    ]


def _demonyms(names: list[tuple[str, str]]) -> list[SameAs]:
    return [
        SameAs(entity_key(name), base, "demonym")
        for name, type_ in names
        if type_ not in ("person", "location")
        for base in demonym_bases(name)
    ]


def _pinyin(names: list[tuple[str, str]]) -> list[SameAs]:
    return [
        SameAs(entity_key(name), spelled, "pinyin")
        for name, _ in names
        for spelled in pinyin.spellings(name)
    ]


def ledger_rows(chunk: Chunk, found: Sequence[SameAs]) -> list[Mention]:
    """The ledger rows of a chunk's evidence: one per entity key, keyed `same_as_key(key)`,
    listing its partners and rules, so stage 2 reads an entity's evidence by key."""
    partners: dict[str, list[tuple[str, str]]] = {}
    for same in found:
        partners.setdefault(same.a, []).append((same.b, same.rule))
        partners.setdefault(same.b, []).append((same.a, same.rule))
    return [_row(chunk, key, pairs) for key, pairs in sorted(partners.items())]


def _row(chunk: Chunk, key: str, pairs: list[tuple[str, str]]) -> Mention:
    return Mention(
        workspace=chunk.workspace, chunk_id=chunk.id, doc_id=chunk.doc_id,
        kind=MentionKind.SAME_AS, key=same_as_key(key), source=key,
        description=json.dumps(sorted(pairs), ensure_ascii=False),
    )  # fmt: skip


def read_rows(rows: Sequence[Mention]) -> list[SameAs]:
    """The evidence the ledger rows hold, each pair once."""
    found = {
        SameAs(*_pair(row.source, str(other)), str(rule))
        for row in rows
        for other, rule in json.loads(row.description)
    }
    return sorted(found)
