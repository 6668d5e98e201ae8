"""Entity resolution on a kept index: entities that differ only in spelling, counted.

Two entities "differ only by case, diacritics, hyphens or punctuation" when their names are
equal once NFKD-folded, casefolded and stripped of everything but letters and digits
("Hugo Chávez" / "Hugo Chavez", "Palais-Royal" / "Palais Royal", "St. Louis" / "St Louis").
Run on demand over an index `ragstream eval multihop --index-dir DIR` kept:

    .venv/bin/python -m tests.bench.bench_resolution DIR [DIR ...]

Printed per index: entities, resolved entities (with members), and the groups (and surplus
entities) of such spellings, with up to ten examples; `punctuation_groups` leaves out the
groups whose names differ in spacing alone ("Bee Hive" / "Beehive"), which no rule merges.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import unicodedata
from collections import defaultdict
from pathlib import Path


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


def report(index_dir: Path) -> dict[str, object]:
    conn = sqlite3.connect(f"file:{index_dir / 'ragstream.db'}?mode=ro", uri=True)
    rows = conn.execute(
        "SELECT r.id, d.attrs FROM search_entities AS r "
        "JOIN search_entities_data AS d ON d.pk = r.pk"
    ).fetchall()
    by_spelling: dict[str, list[str]] = defaultdict(list)
    resolved = 0
    for _, attrs in rows:
        stored = json.loads(attrs)
        resolved += bool(stored.get("members"))
        by_spelling[spelling(str(stored.get("name", "")))].append(str(stored.get("name", "")))
    groups = sorted((names for names in by_spelling.values() if len(names) > 1), key=sorted)
    return {
        "index": str(index_dir),
        "entities": len(rows),
        "resolved": resolved,
        "spelling_groups": len(groups),
        "surplus_entities": sum(len(g) - 1 for g in groups),
        "punctuation_groups": sum(punctuation_only(g) for g in groups),
        "examples": [sorted(g) for g in groups[:10]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("index_dirs", nargs="+", type=Path)
    for index_dir in parser.parse_args().index_dirs:
        print(json.dumps(report(index_dir), ensure_ascii=False))


if __name__ == "__main__":
    main()
