"""Entity resolution on a kept index: entities that differ only in spelling, counted.

Two entities "differ only by case, diacritics, hyphens or punctuation" when their names are
equal once NFKD-folded, casefolded and stripped of everything but letters and digits
("Hugo Chávez" / "Hugo Chavez", "Palais-Royal" / "Palais Royal", "St. Louis" / "St Louis").
Run on demand over an index `ragstream eval multihop --index-dir DIR` kept:

    .venv/bin/python -m tests.bench.bench_resolution DIR [DIR ...] [--corpus CORPUS.jsonl]

Printed per index: entities, resolved entities (with members), and the groups (and surplus
entities) of such spellings, with up to ten examples; `punctuation_groups` leaves out the
groups whose names differ in spacing alone ("Bee Hive" / "Beehive"), which no rule merges.
Also the entities by type (`concept_share`), names that run two sentences together
("1850.After World War II") or open with a clause's conjunction ("Although Yoritada"),
and, given the corpus, one-word names that its passages write in lowercase more often than
capitalized ("Charge", "Formed"): common words (an
acronym, "AM" or "VA", is none), how many of those are a passage's title, its subject
("Adolescence", "Water"), which the extractor keeps by design, and how many a passage
writes alone in double quotes, the title of a work ('"Brother" is a song', '"Ten"', an
album), and the rest, listed.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import unicodedata
from collections import Counter, defaultdict
from pathlib import Path

from ragstream.indexer.stages.extract.nlp_lexicon import SENTENCE_ABBREVIATIONS

_RUN_TOGETHER = re.compile(r"[a-z0-9)][.!?][A-Z](?![A-Z.]|\b)|(\w+)[.!?] [A-Z][a-z]")
"""A sentence's end before a capitalized word: "1850.After", "area. By". Not an abbreviation
of single capitals ("Ph.D", "G.d.E") nor a capitalized run in a web address."""
_WEB_ADDRESS = re.compile(r"^(?:www\.)?[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|edu|gov|info)$", re.I)
_WORD = re.compile(r"[^\W\d_]+")


def spelling(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name))
    bare = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return "".join(c for c in bare if c.isalnum())


def _bare(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", name))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def punctuation_only(names: list[str]) -> bool:
    """Whether some two of the names are equal with punctuation dropped, or with it read
    as a space ("U.S" / "US", "Kim Il-sung" / "Kim Il Sung"), spaces otherwise kept."""
    dropped = ["".join(c for c in _bare(n) if c.isalnum() or c.isspace()).split() for n in names]
    spaced = ["".join(c if c.isalnum() else " " for c in _bare(n)).split() for n in names]
    return any(
        dropped[i] == dropped[j] or spaced[i] == spaced[j]
        for i in range(len(names))
        for j in range(i + 1, len(names))
    )


_CLAUSE_OPENER = re.compile(r"^(?:Although|Though|Unlike|Unless|Whereas|Whilst) ")
"""A conjunction that opens a clause, read into the name after it ("Although Yoritada")."""


def _runs_together(name: str) -> bool:
    """A name that holds a sentence's end ("Guatemala.It", "area. By"), not an abbreviation's
    period ("Mr. Banks", "St. James"), or a clause's first word ("Although Yoritada")."""
    if _CLAUSE_OPENER.match(name):
        return True
    return not _WEB_ADDRESS.match(name) and any(
        not m.group(1) or (m.group(1) not in SENTENCE_ABBREVIATIONS and len(m.group(1)) > 1)
        for m in _RUN_TOGETHER.finditer(name)
    )


def common_words(corpus: Path) -> set[str]:
    """Words the passages write in lowercase more often than capitalized."""
    lower: Counter[str] = Counter()
    upper: Counter[str] = Counter()
    for line in corpus.read_text(encoding="utf-8").splitlines():
        for word in _WORD.findall(json.loads(line).get("text", "")):
            (lower if word.islower() else upper)[word.lower()] += 1
    return {w for w, n in lower.items() if n > upper[w]}


_QUOTED_WORD = re.compile(r"(?=[\"“]\s*([^\W\d_][\w'’-]*)(?:\s+\([^()\"”]+\))?[,.]?\s*[\"”])")
"""A lookahead, so that a closing quote may open the next match ('"" episode "Badge"'); a
parenthesis that tells a work from others of its name may follow the word ('"Dynasty (1981
TV series)"')."""


def quoted_words(corpus: Path) -> set[str]:
    """Single words the passages write in double quotes: titles of works ('"Badge"',
    '"Dynasty (1981 TV series)"')."""
    found: set[str] = set()
    for line in corpus.read_text(encoding="utf-8").splitlines():
        found.update(_QUOTED_WORD.findall(json.loads(line).get("text", "")))
    return found


_DISAMBIGUATION = re.compile(r"\s+\([^()]+\)$")


def titles(corpus: Path) -> set[str]:
    """The passages' titles, as written and without the parenthesis that tells a title from
    others of its name ("Red (2010 film)" is about "Red")."""
    written = [
        str(json.loads(line).get("title", ""))
        for line in corpus.read_text(encoding="utf-8").splitlines()
    ]
    return {*written, *(_DISAMBIGUATION.sub("", title) for title in written)}


def report(
    index_dir: Path, common: set[str], titled: set[str], quoted: set[str]
) -> dict[str, object]:
    conn = sqlite3.connect(f"file:{index_dir / 'ragstream.db'}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT r.id, d.attrs FROM search_entities AS r "
        "JOIN search_entities_data AS d ON d.pk = r.pk"
    ).fetchall()
    by_spelling: dict[str, list[str]] = defaultdict(list)
    by_type: Counter[str] = Counter()
    resolved = 0
    names: list[str] = []
    for _, attrs in rows:
        stored = json.loads(attrs)
        resolved += bool(stored.get("members"))
        by_type[str(stored.get("type", ""))] += 1
        names.append(str(stored.get("name", "")))
        by_spelling[spelling(names[-1])].append(names[-1])
    fragments = sorted(n for n in names if _runs_together(n))
    lone = sorted(n for n in names if n.isalpha() and not n.isupper() and n.lower() in common)
    groups = sorted((names for names in by_spelling.values() if len(names) > 1), key=sorted)
    return {
        "index": str(index_dir),
        "entities": len(rows),
        "resolved": resolved,
        "spelling_groups": len(groups),
        "surplus_entities": sum(len(g) - 1 for g in groups),
        "punctuation_groups": sum(punctuation_only(g) for g in groups),
        "examples": [sorted(g) for g in groups[:10]],
        "types": dict(by_type.most_common()),
        "concept_share": round(by_type["concept"] / max(1, len(rows)), 3),
        "fragments": len(fragments),
        "fragment_examples": fragments[:10],
        "common_words": len(lone) if common else None,
        "common_word_titles": sum(n in titled for n in lone) if common else None,
        "common_word_quoted": sum(n in quoted for n in lone) if common else None,
        "common_word_others": [n for n in lone if n not in titled and n not in quoted][:80],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index_dirs", nargs="+", type=Path)
    parser.add_argument("--corpus", type=Path, help="the corpus.jsonl the indexes were made of")
    args = parser.parse_args()
    common = common_words(args.corpus) if args.corpus else set()
    titled = titles(args.corpus) if args.corpus else set()
    quoted = quoted_words(args.corpus) if args.corpus else set()
    for index_dir in args.index_dirs:
        print(json.dumps(report(index_dir, common, titled, quoted), ensure_ascii=False))


if __name__ == "__main__":
    main()
