"""Reads the evidence present around a set of entity keys and groups them (stage 2).

Evidence is read breadth-first by ledger key (`models.same_as_key`) until no new key
appears, one ledger read and one chunk-existence check per ring; evidence and mentions
whose chunk is gone are ignored, as stage 2 ignores such mentions everywhere. With the
check on (an LLM configured), each ring also reads the names near its keys' names
(`names.NameIndex`), and the LLM's verdicts on the candidate pairs join the rules' groups.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ragstream.common.derive import merge
from ragstream.common.models import (
    Collection,
    Mention,
    is_relation_key,
    same_as_key,
    split_relation_key,
)
from ragstream.common.storage.protocols import MentionStore, SearchStore
from ragstream.indexer.resolution.checked import Verdict
from ragstream.indexer.resolution.evidence import SameAs, is_block, read_rows
from ragstream.indexer.resolution.groups import Group, groups
from ragstream.indexer.resolution.judge import SameAsJudge
from ragstream.indexer.resolution.member import Member
from ragstream.indexer.resolution.names import NameIndex, Near, candidates

MAX_RINGS = 16
"""Evidence rings read at most; a component deeper than this is cut where the walk stops
(each ring is one read; real alias groups are one or two rings deep)."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """The groups around a set of keys, and the live entity mentions of their members."""

    groups: dict[str, Group]
    mentions: dict[str, list[Mention]]

    def canonical(self, key: str) -> str:
        group = self.groups.get(key)
        return group.canonical if group else key

    def members(self, key: str) -> tuple[str, ...]:
        group = self.groups.get(key)
        return group.members if group else (key,)


@dataclass(frozen=True, slots=True)
class Check:
    """The name index and the LLM that decides the pairs of near names."""

    names: NameIndex
    judge: SameAsJudge


class Resolver:
    def __init__(
        self,
        mentions: MentionStore,
        search: SearchStore,
        max_size: int = 64,
        check: Check | None = None,
    ) -> None:
        self._mentions = mentions
        self._search = search
        self._max_size = max_size
        self._check = check

    async def live(self, ws: str, keys: Iterable[str]) -> dict[str, list[Mention]]:
        """The keys' mentions whose chunk still exists (see stages/ledger.py for why)."""
        found = await self._mentions.mentions_of(ws, list(dict.fromkeys(keys)))
        chunk_ids = list(dict.fromkeys(m.chunk_id for ms in found.values() for m in ms))
        alive = await self._search.existing(Collection.CHUNKS, ws, chunk_ids)
        kept = {key: [m for m in ms if m.chunk_id in alive] for key, ms in found.items()}
        return {key: ms for key, ms in kept.items() if ms}

    async def relations_of(self, ws: str, keys: Iterable[str]) -> set[str]:
        """The raw relation keys the live chunks mentioning `keys` hold with one of them as
        an endpoint: read from the ledger, as the graph no longer holds the edges of a key
        that was merged into another."""
        wanted = set(keys)
        found = await self.live(ws, sorted(wanted))
        chunk_ids = sorted({m.chunk_id for ms in found.values() for m in ms})
        mentioned = await self._mentions.keys_of_chunks(ws, chunk_ids) if chunk_ids else set()
        return {k for k in mentioned if is_relation_key(k) and wanted & set(split_relation_key(k))}

    async def resolve(self, ws: str, keys: Sequence[str], merged: Sequence[str] = ()) -> Resolved:
        """The groups around `keys`; the live mentions of `merged` (the keys the caller will
        merge) and of every key some evidence touches (a key no evidence touches is its own
        group whatever its mentions, so they are not read). With the check on, the name
        records of `merged` are written first, and the walk also starts from the keys near
        a name deleted or renamed."""
        start, own = list(keys), {}
        if self._check is not None:
            own = await self.live(ws, merged)
            start += await self._names(ws, merged, own, self._check.names)
        evidence, near = await self._evidence(ws, start)
        touched = {k for s in evidence for k in (s.a, s.b)} | _near_keys(near)
        unread = (touched | set(merged)) - (set(merged) if self._check is not None else set())
        mentions = own | await self.live(ws, sorted(unread))
        members = {key: _member(key, ms) for key, ms in mentions.items()}
        verdicts: list[Verdict] = []
        if self._check is not None:
            pairs = [p for p in candidates(near) if p.a.key in members and p.b.key in members]
            verdicts = await self._check.judge.verdicts(pairs)
        return Resolved(groups(members, evidence, self._max_size, verdicts), mentions)

    async def _names(
        self, ws: str, merged: Sequence[str], own: dict[str, list[Mention]], names: NameIndex
    ) -> list[str]:
        """Writes the name records of `merged` (from their live mentions, `own`); returns the
        keys near a name deleted or renamed."""
        live = {k: _member(k, own[k]) for k in merged if k in own}
        gone = [k for k in merged if k not in own and not is_block(k)]
        return sorted(await names.update(ws, live, gone))

    async def _evidence(self, ws: str, keys: Sequence[str]) -> tuple[list[SameAs], dict[str, Near]]:
        reached = set(keys)
        frontier = sorted(reached)
        evidence: set[SameAs] = set()
        near: dict[str, Near] = {}
        for _ in range(MAX_RINGS):
            if not frontier:
                break
            rows = await self.live(ws, [same_as_key(k) for k in frontier])
            ring = read_rows([row for found in rows.values() for row in found])
            evidence.update(ring)
            found = {k for s in ring for k in (s.a, s.b)}
            if self._check is not None:
                named = [k for k in frontier if not is_block(k)]
                near.update(await self._check.names.near(ws, named))
                found |= _near_keys({k: near[k] for k in named if k in near})
            frontier = sorted(found - reached)
            reached.update(frontier)
        return sorted(evidence), near


def _near_keys(near: dict[str, Near]) -> set[str]:
    return set(near) | {n.key for found in near.values() for n, _ in found.neighbours}


def _member(key: str, mentions: list[Mention]) -> Member:
    draft = merge(key, mentions)
    return Member(len(draft.chunk_ids), draft.type, draft.name)
