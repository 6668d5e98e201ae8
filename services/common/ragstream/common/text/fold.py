"""Name normalization for entity resolution (pure functions).

`fold` maps the spellings of one name to one form: Unicode NFKC, diacritics folded, case,
hyphens and punctuation, a trailing legal suffix or "& Co." ("IBM Corp." and "IBM", "Hugo
Chávez" and "Hugo Chavez", "Palais-Royal" and "Palais Royal", "Kim Il-sung" and "Kim Il Sung").
Its output lives in the entity-key space (`models.entity_key` of a plain name), so an
entity whose key already is the folded form anchors every other spelling of it.
"""

from __future__ import annotations

import re
import unicodedata

from ragstream.common.models import entity_key

_LEGAL_SUFFIXES = (
    "inc incorporated corp corporation co ltd limited llc plc gmbh ag sa nv bv spa srl"
)
LEGAL_SUFFIXES = frozenset(
    f"{_LEGAL_SUFFIXES} pty oy ab as kk 有限公司 股份有限公司 集团 公司".split()
)
"""Company-form words dropped from the end of a name; "Co" only after another word."""
_AMPERSAND_FIRM = re.compile(r"\s*(?:&|\band)\s*(?:co|company|cie)\.?$")
"""A firm's "& Co." or "and Company" ("Wells Fargo & Company" / "Wells Fargo")."""
POST_NOMINALS = frozenset({"cbe", "obe", "mbe", "kbe", "dbe", "gbe", "kcb", "gcb", "frs", "qc"})
"""Honours dropped from the end of a name ("Donald George Mackay CBE"); "Jr" and "Sr" stay:
they tell two people apart."""
_NUMBER_WORDS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen", "twenty"),
]
_DEMONYM_ENDINGS = {"an": ("n", "an"), "ern": ("ern",), "ese": ("ese",), "i": ("i",)}
"""Endings of a demonym, and what each may add to its place's name: Uganda-n, Europe-an,
Middle East-ern, Japan-ese, Kuwait-i ("South African" / "South Africa")."""

_UNFOLDED = str.maketrans(
    {"ø": "o", "ß": "ss", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i"}
)
"""Letters NFKD does not decompose into a base letter and a mark."""
_PUNCTUATION = re.compile(r"[\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_CJK_SUFFIXES = tuple(s for s in LEGAL_SUFFIXES if _CJK.match(s))
_PLURAL_EXCEPTIONS = ("ss", "us", "is", "ics", "ous", "ness", "series", "species", "news")
_ACRONYM_PLURAL = re.compile(r"[A-Z][A-Z0-9]*[A-Z]s")
_HEAD_ENDS = frozenset({"of", "for"})
"""Words after an English name's head: "Academy Awards for Best Actor", "Counts of Blois"."""
_CONNECTORS = frozenset({"of", "and", "for", "the", "de", "du", "la", "&", "in", "on", "für"})
_NUMBER_WORD = re.compile(rf"\b(?i:{'|'.join(_NUMBER_WORDS)})\b")
_SHORT_FORMS = (
    (re.compile(r"(?<![\w.])U\.?S\.?(?![\w.])"), "United States"),
    (re.compile(r"(?<![\w.])U\.?K\.?(?![\w.])"), "United Kingdom"),
    (re.compile(r"^St\.?(?= )"), "Saint"),
    (re.compile(r"^Mt\.?(?= )"), "Mount"),
    (re.compile(r"^Ft\.?(?= )"), "Fort"),
    (re.compile(r" ?& ?"), " and "),
)
"""Short forms written out before folding: uppercase country initials anywhere, a leading
"St", "Mt" or "Ft" (a trailing "St" is a street), "&" ("War& Peace" / "War and Peace")."""


def fold_diacritics(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return bare.translate(_UNFOLDED)


def is_cjk(name: str) -> bool:
    return bool(_CJK.search(name))


def fold(name: str) -> str:
    """The folded form of a name, in entity-key space; "" when nothing is left."""
    key = entity_key(name)
    if is_cjk(key):
        return _fold_cjk(key)
    key = _AMPERSAND_FIRM.sub("", key) or key
    words = _initialisms(_PUNCTUATION.sub(" ", fold_diacritics(key)).split())
    while len(words) > 1 and (words[-1] in LEGAL_SUFFIXES or words[-1] in POST_NOMINALS):
        words.pop()
    return " ".join(words)


def spelling(key: str) -> str:
    """A key with diacritics, hyphens and punctuation folded, its words kept apart: two keys
    with one spelling are one name written two ways ("İzmir" / "Izmir", "Palais-Royal" /
    "Palais Royal"), unlike a legal suffix ("Jordan" / "Jordan Inc")."""
    return " ".join(_PUNCTUATION.sub(" ", fold_diacritics(entity_key(key))).split())


def compact(name: str) -> str:
    """A name with punctuation, its letters and digits only ("Coca-Cola" -> "cocacola", the key
    of "CocaCola"); "" for a name without punctuation (spaces alone are no punctuation)."""
    key = entity_key(name)
    if is_cjk(key) or not _PUNCTUATION.search(key.replace(" ", "")):
        return ""
    return _PUNCTUATION.sub("", fold_diacritics(key).replace(" ", ""))


_INSIDE_A_WORD = re.compile(r"\w[^\w\s]+\w")
"""Punctuation between two letters or digits of one word ("Musa'id", "Il-sung")."""


def joined_words(name: str) -> str:
    """A name of several words with the punctuation inside its words dropped, the words kept
    apart ("Abdul Aziz bin Musa'id" -> "abdul aziz bin musaid", the key of "Abdul Aziz bin
    Musaid"; `compact` joins a one-word name so); "" for a name of one word or none inside."""
    key = entity_key(name)
    if is_cjk(key) or " " not in key or not _INSIDE_A_WORD.search(key):
        return ""
    return " ".join(_PUNCTUATION.sub("", word) for word in fold_diacritics(key).split())


def _initialisms(words: list[str]) -> list[str]:
    """Runs of single letters joined: "u s a" (from "U.S.A.") -> "usa", "j r r tolkien"
    -> "jrr tolkien"."""
    joined: list[str] = []
    run = False
    for word in words:
        single = len(word) == 1 and word.isalpha()
        if single and run:
            joined[-1] += word
        else:
            joined.append(word)
        run = single
    return joined


def singular_fold(name: str) -> str:
    """The folded form with a plain English plural dropped from its last word ("sensors" /
    "sensor", "Reformed Churches" / "reformed church", "Pulitzer Prizes" / "pulitzer
    prize"), for a name written in lowercase (a common noun) or of two words or more; an
    acronym's plural is the acronym ("BAFTAs" / "bafta"). Never another one-word proper
    name ("Mars", "Hughes", "Amazons"); "" when the rule does not apply."""
    folded = fold(name)
    if is_cjk(folded) or not folded:
        return ""
    if " " not in folded:
        if is_acronym_plural(name):
            return folded[:-1]
        if name != name.lower():
            return ""
    head, _, last = folded.rpartition(" ")
    single = singular(last)
    return f"{head} {single}".strip() if single else ""


def head_singular_fold(name: str) -> str:
    """The folded form with a plural dropped from the head of a name the words "of" or "for"
    follow, the word before them ("Academy Awards for Best Actor" / "academy award for best
    actor", "Counts of Blois" / "count of blois"); "" when the name has no such head or it
    is no plural (the last word is `singular_fold`'s: "Institute of Contemporary Arts")."""
    words = fold(name).split()
    at = next((i for i, w in enumerate(words) if w in _HEAD_ENDS and i > 0), 0) - 1
    single = singular(words[at]) if at >= 0 and not is_cjk(name) else ""
    return " ".join([*words[:at], single, *words[at + 1 :]]) if single else ""


def is_acronym_plural(name: str) -> bool:
    """An acronym with a plural s ("BAFTAs", "DVDs")."""
    return bool(_ACRONYM_PLURAL.fullmatch(name.strip()))


def unprefixed_fold(name: str) -> str:
    """The folded form without a leading article ("The", "A", "An"), for a name of two words
    or more after it ("The Bedford Incident" / "bedford incident", "A Night of Mystery" /
    "night of mystery": a title the text writes with its article in one place and without
    it in another); "" when the rule does not apply. A single word after it stays apart:
    "The Sun" is not the sun, nor "The Independent" an independent; an initial is no
    article ("A. Smith Jones")."""
    words = fold(name).split()
    if len(words) < 3 or is_cjk(name):
        return ""
    article = name.split(maxsplit=1)[0]
    if words[0] == "the" or article in ("A", "An", "AN"):
        return " ".join(words[1:])
    return ""


def singular(word: str) -> str:
    """The singular of a lowercase English plural ("monasteries" -> "monastery", "churches"
    -> "church"); "" for a word that is none ("class", "series", "bus")."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(_PLURAL_EXCEPTIONS):
        return ""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zzes", "tzes")):
        return word[:-2]  # "churches", "boxes", "buzzes", "waltzes"; but "prizes" / "prize"
    return word[:-1]


def expanded_fold(name: str) -> str:
    """The folded form with the common short forms of a name written out ("US Congress" /
    "united states congress", "St. Paul" / "saint paul", "U.K. Antarctic Place-Names
    Committee") and the number words of a name of several words in digits ("Twelve Monkeys"
    / "12 monkeys"); "" when the name holds none."""
    written = _written_out(name)
    folded = fold(written)
    return folded if written != name and folded != fold(name) else ""


def _written_out(name: str) -> str:
    written = name
    for pattern, full in _SHORT_FORMS:
        written = pattern.sub(full, written)
    if " " in written.strip():
        written = _NUMBER_WORD.sub(lambda m: str(_NUMBER_WORDS.index(m.group(0).lower())), written)
    return written


def name_form(name: str) -> str:
    """One form for the ways of writing one name: its spelling (`spelling`), short forms
    and number words written out, plurals, the order of the words, connectors and the spaces
    between words ("Sea-Tac" / "SeaTac"). Unlike
    `fold`, a legal suffix stays: "Jordan" and "Jordan Inc" are two names that may be two
    things."""
    words = spelling(_written_out(name)).split()
    if len(words) > 1:
        words = [singular(w) or w for w in words]
    kept = sorted(w for w in words if w not in _CONNECTORS)
    return "".join(kept or words)  # spaces too: "Sea-Tac" / "SeaTac"


def demonym_bases(name: str) -> list[str]:
    """The place names (folded) a demonym may come from: "South African" / "south africa",
    "Ugandan" / "uganda", "Kuwaiti" / "kuwait", "Middle Eastern" / "middle east",
    "Californians" / "california"; [] for a name whose last word is not capitalized."""
    words = name.split()
    if not words or not words[-1][:1].isupper() or is_cjk(name):
        return []
    last = words[-1][:-1] if words[-1].endswith("s") else words[-1]
    bases = []
    for ending, added in _DEMONYM_ENDINGS.items():
        if not last.endswith(ending):
            continue
        for part in added:
            stem = last[: -len(part)]
            if len(stem) >= 4:
                bases.append(fold(" ".join([*words[:-1], stem])))
    return sorted(set(bases))


def word_set(name: str) -> str:
    """The folded words of a name without connectors, sorted: one form for the orders of
    one name's words ("Treaty of Versailles" / "Versailles Treaty"); "" for fewer than two
    such words or a CJK name."""
    words = content_words(name)
    return " ".join(sorted(words)) if len(words) >= 2 and not is_cjk(name) else ""


def content_words(name: str) -> tuple[str, ...]:
    """The folded words of a name without connectors, in their order: "Treaty of
    Versailles" -> ("treaty", "versailles")."""
    return tuple(w for w in fold(_written_out(name)).split() if w not in _CONNECTORS)


def _fold_cjk(key: str) -> str:
    """CJK names keep their characters (no case, no diacritics): only punctuation, spaces
    and a trailing company form go."""
    bare = _PUNCTUATION.sub("", key)
    for suffix in sorted(_CJK_SUFFIXES, key=len, reverse=True):
        if bare.endswith(suffix) and len(bare) > len(suffix) + 1:
            return bare[: -len(suffix)]
    return bare


def acronym(words: list[str]) -> str:
    """The initials of a name's words, connectors skipped: "Bank of England" -> "BE"."""
    return "".join(w[0].upper() for w in words if w.lower() not in _CONNECTORS and w[0].isalnum())


def acronyms(words: list[str]) -> set[str]:
    """The acronyms a name may have: connectors skipped or kept ("BE", "BOE")."""
    return {acronym(words), "".join(w[0].upper() for w in words if w[0].isalnum())}


def abbreviation_letters(abbr: str) -> str:
    """ "I.B.M." and "IBM" -> "IBM"; lowercase letters of mixed-case forms kept ("DfE")."""
    return "".join(c for c in abbr if c.isalnum()).upper()


def cjk_similar(a: str, b: str) -> bool:
    """Two CJK names as one (RAGFlow's rule, stricter): character-set Jaccard at least 0.8,
    both at least two characters, and no digit among the characters they do not share
    ("1号线" and "2号线" differ)."""
    set_a, set_b = set(a), set(b)
    if min(len(a), len(b)) < 2 or a == b:
        return False
    differing = set_a ^ set_b
    if any(c.isdigit() for c in differing):
        return False
    return len(set_a & set_b) / len(set_a | set_b) >= 0.8
