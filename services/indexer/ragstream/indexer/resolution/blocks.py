"""Pairs of live entity keys that evidence at a blocking key makes (pure functions).

Evidence of the rules `evidence.BLOCKED` links an entity key to a blocking key, not to
another entity: the words of a name in any order (`order`), a person's first and last name
(`middle`), a lone name in its document (`document_name`). Stage 2 pairs the live members
of each block by the rule's own test, and the pairs join the grouping as evidence of that
rule (`groups.groups`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from ragstream.common.text.fold import content_words
from ragstream.indexer.resolution.evidence import BLOCKED, PERSON_OR_UNTYPED, SameAs, is_block
from ragstream.indexer.resolution.member import Member


def block_pairs(evidence: Sequence[SameAs], members: Mapping[str, Member]) -> list[SameAs]:
    """The pairs of live members that the evidence at each blocking key makes, by its rule.

    A lone name pairs with a full name of its document (`document_name`) only when that
    full name is in every document where the lone name is used alone: "Victoria" used
    alone in sixteen documents is not Victoria Melita because one of them names her."""
    blocks: dict[tuple[str, str], set[str]] = defaultdict(set)
    for same in evidence:
        if same.rule in BLOCKED:
            key, block = (same.b, same.a) if is_block(same.a) else (same.a, same.b)
            if key in members:
                blocks[block, same.rule].add(key)
    alone_in = _lone_names(blocks, members)
    pairs: set[SameAs] = set()
    for (_, rule), keys in blocks.items():
        ordered = sorted(keys)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1 :]:
                if _PAIRED[rule](members[a], members[b]) and _everywhere(a, b, alone_in):
                    pairs.add(SameAs(a, b, rule))
    return sorted(pairs)


def _lone_names(
    blocks: Mapping[tuple[str, str], set[str]], members: Mapping[str, Member]
) -> dict[str, list[set[str]]]:
    """Lone name key -> the keys of each `document_name` block it is in (one a document)."""
    found: dict[str, list[set[str]]] = defaultdict(list)
    for (_, rule), keys in blocks.items():
        if rule == "document_name":
            for key in keys:
                if not members[key].full:
                    found[key].append(keys)
    return found


def _everywhere(a: str, b: str, alone_in: Mapping[str, list[set[str]]]) -> bool:
    """Whether each of the two, where used alone, is always beside the other."""
    return all(b in keys for keys in alone_in.get(a, ())) and all(
        a in keys for keys in alone_in.get(b, ())
    )


def _reordered(a: Member, b: Member) -> bool:
    """Two names of the same words in another order ("Treaty of Versailles" / "Versailles
    Treaty"), not in the same order with other connectors ("Feel the Love" / "Feel Love",
    "Madame la Presidente" / "Madame Presidente": two titles)."""
    return "person" not in (a.type, b.type) and content_words(a.name) != content_words(b.name)


def _without_middle(a: Member, b: Member) -> bool:
    """Two people's names, first and last the same: one without a middle name of the other
    ("Paul Stevens" / "Paul David Stevens"), or with a middle name as its initial, word for
    word ("Paul J. Sorg" / "Paul John Sorg"; "George W. Bush" is neither "George Herbert
    Walker Bush" nor "George H. W. Bush"). Both typed person; or one, and the other untyped
    when a middle initial says that these are a person's names ("Persis Drell" / "Persis S.
    Drell", whose type nothing gave; not "French Revolutionary Wars", typed person by
    mistake, and "French Wars", nor "Duke Carl Alexander" and "Duke Alexander")."""
    short, full = sorted((a.name.casefold().split(), b.name.casefold().split()), key=len)
    types = {a.type, b.type}
    if "person" not in types or not types <= PERSON_OR_UNTYPED or short == full:
        return False
    if types != {"person"} and not any(initial(w) for w in short[1:-1] + full[1:-1]):
        return False
    if short[0] != full[0] or short[-1] != full[-1]:
        return False
    if len(short) == len(full):
        return all(map(_stands_for, short, full)) or all(map(_stands_for, full, short))
    if any(initial(w) for w in short[1:-1]):
        return False  # "George W. Bush" is no "George H. W. Bush"
    rest = iter(full)
    return all(w in rest for w in short)


def initial(word: str) -> bool:
    """A one-letter word, with or without its period ("J.", "J")."""
    return len(word.rstrip(".")) == 1


def _stands_for(word: str, other: str) -> bool:
    """`word` is `other`, or its initial ("j." for "john")."""
    return word == other or (initial(word) and other[:1] == word[:1])


def _used_alone(a: Member, b: Member) -> bool:
    short, full = sorted((a, b), key=lambda m: len(m.name.split()))
    words = full.name.split()
    return (
        len(short.name.split()) == 1
        and len(words) > 1
        and full.type == "person"
        and short.type in PERSON_OR_UNTYPED
        and short.name.casefold() in (words[0].casefold(), words[-1].casefold())
    )


_PAIRED = {"order": _reordered, "middle": _without_middle, "document_name": _used_alone}
