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
  more and neither typed person ("Academy Awards" / "Academy Award", not "Amazons"), or an
  acronym and its plural ("BAFTAs" / "BAFTA");
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
from ragstream.common.text.fold import is_acronym_plural, is_cjk, name_form
from ragstream.indexer.resolution.blocks import block_pairs, initial
from ragstream.indexer.resolution.checked import Verdict, joined, one_type
from ragstream.indexer.resolution.evidence import (
    BLOCKED,
    DERIVED,
    STRONG,
    TRANSLITERATION,
    WEAK,
    SameAs,
)
from ragstream.indexer.resolution.member import Member


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
    return (
        all(m.name == m.name.lower() for m in named)
        or all(m.full and m.type != "person" for m in named)
        or any(is_acronym_plural(m.name) for m in named)
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
    by_rank: dict[tuple[int, int], list[tuple[str, str]]] = defaultdict(list)
    for same in evidence:
        if same.rule in WEAK and same.a in members and same.b in members:
            short, full = sorted((same.a, same.b), key=lambda k: (_rank(members[k]), k))
            by_rank[_rank(members[short])].append((short, full))
    groups = [(sorted(keys), sorted(keys)) for keys in classes]
    for rank in sorted(by_rank, reverse=True):
        groups = _joined_once(groups, by_rank[rank], members)
    return sorted(groups)


def _rank(member: Member) -> tuple[int, int]:
    """Words, then words written out: "Thomas H. Ince" ranks below "Thomas Harper Ince"; of
    a pair, the lower is the short name."""
    words = member.name.split()
    return len(words), sum(not initial(w) for w in words)


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
        core[into.get(i, i)] += names if i not in into else [k for k in names if members[k].full]
    return [(sorted(keys), sorted(core[root])) for root, keys in merged.items()]


def _canonical(keys: list[str], members: Mapping[str, Member]) -> str:
    return min(keys, key=lambda k: (-members[k].mentions, k))
