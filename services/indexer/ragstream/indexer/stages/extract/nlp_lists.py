"""Names listed together are of one kind (pure functions).

English lists things of one kind: "Marrakech, Rabat, Agadir, Oujda, Tangier and Laayoune",
"starring Rade Marković, Bogdan Diklić and Mirjana Karanović". Where the small model types
most of a list's names one way and a few another ("Laayoune" an organization, "Mirjana
Karanović" an organization), the few follow the many, unless the rules found evidence of
their own for them. A list is three names or more with only commas, "and" or "or" (and a
parenthesis after a name: "St. Moritz (1948), Cortina d'Ampezzo (1956)") between them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence, Set

from ragstream.indexer.stages.extract.nlp_lexicon import CONCEPT

MIN_LISTED = 3
"""Names in a list, and names of its leading type, from which the list types the rest."""
LEADING_SHARE = 0.75
"""Share of a list's typed names the leading type must hold."""

_BETWEEN = re.compile(r"(?:\s*\([^()]{0,40}\))?\s*(?:,\s*(?:(?:and|or)\s+)?|\s(?:and|or)\s+)")
"""What stands between two listed names: a comma, "and" or "or", after a parenthesis."""


def listed_types(
    sentences: Sequence[str],
    matcher: re.Pattern[str],
    variants: Mapping[str, str],
    types: Mapping[str, str],
    evidenced: Set[str],
) -> dict[str, str]:
    """The keys whose type the chunk's lists change, with that type (`list_types`);
    `matcher` finds the chunk's names, `variants` maps each spelling to its key."""
    if len(set(variants.values())) < MIN_LISTED:
        return {}
    runs = [
        [variants[text] for text in run]
        for sentence in sentences
        for run in listed_runs(sentence, list(matcher.finditer(sentence)))
    ]
    return list_types(runs, types, evidenced)


def listed_runs(sentence: str, matches: Sequence[re.Match[str]]) -> list[list[str]]:
    """The runs of matched names that the sentence lists, each of MIN_LISTED or more, as the
    texts of their matches."""
    runs: list[list[str]] = []
    run: list[str] = []
    last_end = -1
    for match in matches:
        gap = sentence[last_end : match.start()] if run else ""
        if run and _BETWEEN.fullmatch(gap):
            run.append(match.group())
        else:
            if len(run) >= MIN_LISTED:
                runs.append(run)
            run = [match.group()]
        last_end = match.end()
    if len(run) >= MIN_LISTED:
        runs.append(run)
    return runs


def list_types(
    runs: Sequence[Sequence[str]], types: Mapping[str, str], evidenced: Set[str]
) -> dict[str, str]:
    """The keys whose type a list changes, with that type: in a list whose leading type holds
    MIN_LISTED names and LEADING_SHARE of its typed ones, every name of another type (or
    none) that the rules gave no evidence (`evidenced`). `runs` hold keys."""
    changed: dict[str, str] = {}
    for run in runs:
        kinds = Counter(types[key] for key in set(run) if types.get(key, CONCEPT) != CONCEPT)
        if not kinds:
            continue
        leading, count = kinds.most_common(1)[0]
        if count < MIN_LISTED or count < LEADING_SHARE * sum(kinds.values()):
            continue
        for key in run:
            if key not in evidenced and types.get(key) != leading:
                changed[key] = leading
    return changed
