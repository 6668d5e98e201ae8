"""Which languages a text is written in, told cheaply from its script, for the embedders'
language rule (docs/architecture.md, "Providers").

An embedder declares the languages it serves (ISO 639-1 codes, or `ANY`). A script alone
cannot tell English from French, but it can tell that Chinese is not English: each letter
belongs to one script, and each script is written by a known set of languages. A text is
served when more than half of its letters are in scripts that one of the embedder's
languages writes. Letters are weighted so that a script's share follows the words rather
than the characters: a Han, kana or Hangul character carries about as much as three Latin
letters (an English word averages under five letters, a Chinese word under two characters).
A text with no letters at all (numbers, symbols) is served by every embedder.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

ANY = "any"
"""The language code of an embedder that serves every language."""


@dataclass(frozen=True, slots=True)
class Script:
    name: str
    letters: re.Pattern[str]
    languages: frozenset[str]
    weight: int = 1


def _script(name: str, ranges: str, languages: str, weight: int = 1) -> Script:
    letters = re.compile(f"[{ranges}]")
    return Script(name, letters, frozenset(languages.split()), weight)


# Letters only: digits, spaces and punctuation belong to no script here.
SCRIPTS = (
    _script(
        "latin",
        "A-Za-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff\uff21-\uff3a\uff41-\uff5a",
        "en fr de es it pt nl sv da no nb nn is fi et lv lt pl cs sk sl hr bs sr hu ro sq "
        "ca gl eu ga cy mt tr az uz id ms tl vi sw af yo ha ig zu xh so la eo",
    ),
    _script("han", "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f", "zh ja", 3),
    _script("kana", "\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9d", "ja", 3),
    _script("hangul", "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af", "ko", 3),
    _script("cyrillic", "\u0400-\u052f", "ru uk be bg sr mk kk ky mn tg"),
    _script("greek", "\u0370-\u03ff\u1f00-\u1fff", "el"),
    _script("arabic", "\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufeff", "ar fa ur ps"),
    _script("hebrew", "\u0590-\u05ff", "he yi"),
    _script("devanagari", "\u0900-\u097f", "hi mr ne sa"),
    _script("bengali", "\u0980-\u09ff", "bn as"),
    _script("gurmukhi", "\u0a00-\u0a7f", "pa"),
    _script("gujarati", "\u0a80-\u0aff", "gu"),
    _script("tamil", "\u0b80-\u0bff", "ta"),
    _script("telugu", "\u0c00-\u0c7f", "te"),
    _script("kannada", "\u0c80-\u0cff", "kn"),
    _script("malayalam", "\u0d00-\u0d7f", "ml"),
    _script("sinhala", "\u0d80-\u0dff", "si"),
    _script("thai", "\u0e00-\u0e7f", "th"),
    _script("lao", "\u0e80-\u0eff", "lo"),
    _script("myanmar", "\u1000-\u109f", "my"),
    _script("georgian", "\u10a0-\u10ff", "ka"),
    _script("armenian", "\u0530-\u058f", "hy"),
    _script("ethiopic", "\u1200-\u137f", "am ti"),
    _script("khmer", "\u1780-\u17ff", "km"),
)
KNOWN_LANGUAGES = frozenset(code for script in SCRIPTS for code in script.languages)


def script_shares(text: str) -> dict[str, float]:
    """Each script's weighted share of the text's letters (empty: no letters)."""
    counts = {s.name: len(s.letters.findall(text)) * s.weight for s in SCRIPTS}
    total = sum(counts.values())
    return {name: count / total for name, count in counts.items() if count} if total else {}


def served(text: str, languages: frozenset[str]) -> bool:
    """Whether an embedder serving `languages` understands `text` (see the module doc)."""
    if ANY in languages:
        return True
    shares = script_shares(text)
    if not shares:
        return True
    scripts = {s.name for s in SCRIPTS if s.languages & languages}
    return sum(share for name, share in shares.items() if name in scripts) > 0.5


def parse_languages(codes: Iterable[str]) -> frozenset[str]:
    """Language codes, lowercased and checked; `ANY` alone stands for every language."""
    found = frozenset(code.strip().lower() for code in codes if code.strip())
    unknown = sorted(found - KNOWN_LANGUAGES - {ANY})
    if unknown:
        raise ValueError(
            f"unknown language code(s) {', '.join(unknown)}: use ISO 639-1 codes "
            f"such as en, zh, ja, ko, ru, or {ANY!r}"
        )
    if not found:
        raise ValueError(f"at least one language code (or {ANY!r}) is required")
    return frozenset({ANY}) if ANY in found else found
