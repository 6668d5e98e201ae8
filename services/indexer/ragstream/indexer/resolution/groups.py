"""Alias groups from the evidence present (pure functions).

A group is a function of the evidence and of the members' mentions, never of the order in
which they arrived. Closure over every edge would cascade wrong merges (LightRAG #1323), so
the components are checked before they are used:
- strong evidence (`evidence.STRONG`) joins keys into components; a component larger than
  `max_size` keys is left unmerged (a hub of weak names, not one thing);
- a component whose members have different evidenced types (person and organization) is
  split by type; members typed only by fallback (`concept`, `unknown`) join the type with
  the most mentions. The forms of one name ("İzmir" / "Izmir", "Chess Olympiads" / "Chess
  Olympiad", "Sea-Tac" / "SeaTac") are never split (`fold.name_form`: spelling, short forms,
  number words, plurals, word order and spaces folded; a legal suffix is not a form): they
  take the type most of their mentions give, since a type is a vote that can be wrong and a
  form is not;
- a pinyin spelling (`evidence.TRANSLITERATION`) joins a Chinese name to the Latin entity
  of that key only when both are live and neither has another such partner: 林海涛 and
  林海韬 both spell "lin haitao", and then neither joins Lin Haitao. The two are one
  spelling for the type split below (舟山 / Zhoushan take the type most mentions give);
- evidence at a blocking key (`evidence.BLOCKED`) becomes pairs of the block's live
  members (`block_pairs`): two names in another word order, neither typed person, join;
  a person's shorter name points at a longer one holding its words in order, first and
  last the same ("Paul Stevens" / "Paul David Stevens"), and a name with a middle initial
  at the name with that middle name ("Paul J. Sorg" / "Paul John Sorg"); a lone name typed
  person or untyped points at the full names typed person of its document that start or end
  with it, if it stands beside that name in every document where it is used alone;
- plural evidence counts between names both written in lowercase, or both of two words or
  more and neither typed person ("Academy Awards" / "Academy Award", not "Amazons");
- weak evidence (a surname or given name alone, a name without its middle name) joins the
  short name's group to a full name's group only when it points at exactly one:
  "Halvorsen" after both "Ingrid Halvorsen" and "Halvorsen Aquatics" stays apart, and two
  full names never merge through a surname they share. It joins in rounds, the longest
  short names first, so that "Thomas Ince" finds "Thomas H. Ince" and "Thomas Harper Ince"
  already one.
The canonical member of a group is the one with the most live mentions, ties by key (in a
group a short name joined, among its names of several words).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ragstream.common.derive import FALLBACK_TYPES
from ragstream.common.models import entity_key
from ragstream.common.text.fold import content_words, is_cjk, name_form
from ragstream.indexer.resolution.checked import Verdict, joined, one_type
from ragstream.indexer.resolution.evidence import (
    BLOCKED,
    DERIVED,
    STRONG,
    TRANSLITERATION,
    WEAK,
    SameAs,
    is_block,
)


@dataclass(frozen=True, slots=True)
class Member:
    """What the grouping needs to know about one entity key with live mentions."""

    mentions: int
    """Chunks that mention it."""
    type: str
    """Its voted type."""
    name: str
    """Its voted display name."""


@dataclass(frozen=True, slots=True)
class Group:
    canonical: str
    members: tuple[str, ...]
    """Every member's key, sorted; the canonical one among them."""


class _Union:
    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        parent = self._parent.setdefault(key, key)
        if parent != key:
            parent = self._parent[key] = self.find(parent)
        return parent

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)

    def sets(self, keys: Iterable[str]) -> list[list[str]]:
        by_root: dict[str, list[str]] = defaultdict(list)
        for key in sorted(keys):
            by_root[self.find(key)].append(key)
        return sorted(by_root.values())


def groups(
    members: Mapping[str, Member],
    evidence: Sequence[SameAs],
    max_size: int,
    verdicts: Sequence[Verdict] = (),
) -> dict[str, Group]:
    """The group of every member key (a key no evidence touches is a group of one).
    `evidence` may name keys without live mentions: they connect, but are no members.
    `verdicts` (the LLM's, on pairs of live keys) join the rules' groups (`checked.joined`)."""
    evidence = [s for s in evidence if s.rule not in BLOCKED] + block_pairs(evidence, members)
    strong = _Union()
    ambiguous = _ambiguous_abbreviations(evidence)
    for same in evidence:
        if same.rule in STRONG and _accepted(same, members) and same not in ambiguous:
            strong.join(same.a, same.b)
    # A Chinese name and its pinyin, a demonym and its place: one name for the type split.
    romanized = _one_to_one_spellings(evidence, members) | _demonyms(evidence, members)
    for han, latin in romanized.items():
        strong.join(han, latin)
    classes: list[list[str]] = []
    nodes = {k for s in evidence for k in (s.a, s.b)} | set(members)
    for component in strong.sets(nodes):
        live = [k for k in component if k in members]
        if len(component) > max_size:
            classes += [[k] for k in live]
        elif live:
            classes += _by_type(live, members, romanized)
    final = _with_short_names(joined(classes, verdicts, members, max_size), evidence, members)
    return {
        key: Group(_canonical(core, members), tuple(keys)) for keys, core in final for key in keys
    }


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
                if not _full(members[key]):
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
    if "person" not in types or not types <= _PERSON_OR_UNTYPED or short == full:
        return False
    if types != {"person"} and not any(_initial(w) for w in short[1:-1] + full[1:-1]):
        return False
    if short[0] != full[0] or short[-1] != full[-1]:
        return False
    if len(short) == len(full):
        return all(map(_stands_for, short, full)) or all(map(_stands_for, full, short))
    if any(_initial(w) for w in short[1:-1]):
        return False  # "George W. Bush" is no "George H. W. Bush"
    rest = iter(full)
    return all(w in rest for w in short)


_PERSON_OR_UNTYPED = frozenset({"person", *FALLBACK_TYPES})


def _initial(word: str) -> bool:
    return len(word.rstrip(".")) == 1


def _stands_for(word: str, other: str) -> bool:
    """`word` is `other`, or its initial ("j." for "john")."""
    return word == other or (_initial(word) and other[:1] == word[:1])


def _used_alone(a: Member, b: Member) -> bool:
    short, full = sorted((a, b), key=lambda m: len(m.name.split()))
    words = full.name.split()
    return (
        len(short.name.split()) == 1
        and len(words) > 1
        and full.type == "person"
        and short.type in ("person", *FALLBACK_TYPES)
        and short.name.casefold() in (words[0].casefold(), words[-1].casefold())
    )


_PAIRED = {"order": _reordered, "middle": _without_middle, "document_name": _used_alone}


def _ambiguous_abbreviations(evidence: Sequence[SameAs]) -> set[SameAs]:
    """Abbreviation evidence of an abbreviation expanded two ways ("EPA": Environmental
    Protection Agency, Economic Partnership Agreement): it names neither for sure."""
    expansions: dict[str, set[str]] = defaultdict(set)
    for same in evidence:
        if same.rule == "abbreviation":
            short, full = sorted((same.a, same.b), key=lambda k: (" " in k, len(k), k))
            expansions[short].add(full)
    return {
        same
        for same in evidence
        if same.rule == "abbreviation" and any(len(expansions[k]) > 1 for k in (same.a, same.b))
    }


def _one_to_one_spellings(
    evidence: Sequence[SameAs], members: Mapping[str, Member]
) -> dict[str, str]:
    """Chinese key -> the Latin key it spells, from the pinyin evidence between live
    entities, where the Chinese name spells one Latin entity and that entity is spelled by
    one Chinese name."""
    live = [
        (same.a, same.b) if is_cjk(same.a) else (same.b, same.a)
        for same in evidence
        if same.rule in TRANSLITERATION and same.a in members and same.b in members
    ]
    spelled: dict[str, set[str]] = defaultdict(set)
    spells: dict[str, set[str]] = defaultdict(set)
    for han, latin in live:
        spelled[latin].add(han)
        spells[han].add(latin)
    return {han: latin for han, latin in live if len(spelled[latin]) == 1 and len(spells[han]) == 1}


def _demonyms(evidence: Sequence[SameAs], members: Mapping[str, Member]) -> dict[str, str]:
    """Demonym key -> the place key it comes from, for a demonym not typed person or place
    whose evidence names exactly one live entity typed location."""
    places: dict[str, set[str]] = defaultdict(set)
    for same in evidence:
        if same.rule not in DERIVED or same.a not in members or same.b not in members:
            continue
        for name, place in ((same.a, same.b), (same.b, same.a)):
            if members[place].type == "location" and members[name].type not in (
                "person",
                "location",
            ):
                places[name].add(place)
    return {name: min(found) for name, found in places.items() if len(found) == 1}


def _accepted(same: SameAs, members: Mapping[str, Member]) -> bool:
    if same.rule != "plural":
        return True
    named = [members[k] for k in (same.a, same.b) if k in members]
    return all(m.name == m.name.lower() for m in named) or all(
        len(m.name.split()) > 1 and m.type != "person" for m in named
    )


def _specific(member: Member) -> str:
    return "" if member.type in FALLBACK_TYPES else member.type


def _by_type(
    keys: list[str], members: Mapping[str, Member], romanized: Mapping[str, str]
) -> list[list[str]]:
    """The component split by evidenced type, the keys of one name's forms kept together
    (`fold.name_form`; a Chinese name and the Latin name it spells in pinyin, a demonym and
    its place, are one name too)."""
    units: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        units[_form(romanized.get(key, key), members)].append(key)
    typed = {root: _voted_type(unit, members) for root, unit in units.items()}
    types = sorted(set(typed.values()) - {""})
    if len(types) <= 1:
        return [keys]
    weight = {
        t: sum(
            members[k].mentions for root, unit in units.items() if typed[root] == t for k in unit
        )
        for t in types
    }
    heaviest = min(types, key=lambda t: (-weight[t], t))
    by_type: dict[str, list[str]] = defaultdict(list)
    for root, unit in units.items():
        by_type[typed[root] or heaviest] += unit
    return [sorted(by_type[t]) for t in types]


def _form(key: str, members: Mapping[str, Member]) -> str:
    """The name form of a key, read from its display name (which writes "US" apart from
    "us"), or from the key itself when the two differ."""
    name = members[key].name
    return name_form(name if entity_key(name) == key else key)


def _voted_type(keys: list[str], members: Mapping[str, Member]) -> str:
    """The evidenced type most of these keys' mentions give ("" if none is evidenced)."""
    weight: dict[str, int] = defaultdict(int)
    for key in keys:
        if kind := _specific(members[key]):
            weight[kind] += members[key].mentions
    return min(weight, key=lambda t: (-weight[t], t)) if weight else ""


def _with_short_names(
    classes: list[list[str]], evidence: Sequence[SameAs], members: Mapping[str, Member]
) -> list[tuple[list[str], list[str]]]:
    """Joins each class holding a short name to the one class of full names it points at;
    each group comes with the keys its canonical name is chosen from: the full names' and
    the short names of several words ("Frank Lloyd", used more often than "Frank William
    George Lloyd"), not a name used alone ("Ingrid Halvorsen", not "Halvorsen", however
    often the surname is used alone).

    The joins run in rounds, the longest short names first: a name with a middle initial
    joins the name with that middle name ("Thomas H. Ince" / "Thomas Harper Ince") before
    "Thomas Ince" looks for the one full name it points at, and then finds one, not two."""
    pairs = [_short_and_full(same, members) for same in evidence if same.rule in WEAK]
    found = [(short, full) for short, full in pairs if short in members and full in members]
    groups = [(sorted(keys), sorted(keys)) for keys in classes]
    for length in sorted({_rank(members[short]) for short, _ in found}, reverse=True):
        groups = _joined_once(
            groups, [(s, f) for s, f in found if _rank(members[s]) == length], members
        )
    return sorted(groups)


def _short_and_full(same: SameAs, members: Mapping[str, Member]) -> tuple[str, str]:
    """The pair's shorter name first: fewer words, or as many with more initials."""
    if same.a not in members or same.b not in members:
        return same.a, same.b
    short, full = sorted((same.a, same.b), key=lambda k: (_rank(members[k]), k))
    return short, full


def _rank(member: Member) -> tuple[int, int]:
    """Words, then words written out: "Thomas H. Ince" ranks below "Thomas Harper Ince"."""
    words = member.name.split()
    return len(words), sum(not _initial(w) for w in words)


def _joined_once(
    groups: list[tuple[list[str], list[str]]],
    pairs: Sequence[tuple[str, str]],
    members: Mapping[str, Member],
) -> list[tuple[list[str], list[str]]]:
    """One round: each group holding a short name of `pairs` joins the one group its full
    names are in, unless it points at two (ambiguous) or its target points on (a chain)."""
    index = {key: i for i, (keys, _) in enumerate(groups) for key in keys}
    targets: dict[int, set[int]] = defaultdict(set)
    for short, full in pairs:
        source, target = index[short], index[full]
        if source != target and one_type(groups[source][0] + groups[target][0], members):
            targets[source].add(target)
    into = {s: min(t) for s, t in targets.items() if len(t) == 1 and min(t) not in targets}
    merged: dict[int, list[str]] = defaultdict(list)
    core: dict[int, list[str]] = defaultdict(list)
    for i, (keys, names) in enumerate(groups):
        merged[into.get(i, i)] += keys
        # A name of several words joined as a short form ("Frank Lloyd" / "Frank William
        # George Lloyd") may be the group's name; a name used alone may not.
        core[into.get(i, i)] += names if i not in into else [k for k in names if _full(members[k])]
    return [(sorted(keys), sorted(core[root])) for root, keys in merged.items()]


def _full(member: Member) -> bool:
    return len(member.name.split()) > 1


def _canonical(keys: list[str], members: Mapping[str, Member]) -> str:
    return min(keys, key=lambda k: (-members[k].mentions, k))
