"""Stage 2 with entity resolution: what each key of a batch merges, given the alias groups.

Each key keeps a single writer: only key K's merge writes or deletes K's records. A key
that is no longer canonical deletes its records and publishes its group's canonical key;
a canonical key merges the mentions of every member of its group, and publishes the keys
its change leaves stale (members that still have records of their own, members that left
the group, the relations of a group whose membership changed). Those merges publish
nothing more once the stores agree with the evidence, so the chain ends.
A relation re-points to its endpoints' canonical keys: the relation between two groups is
merged from every raw relation between their members, and one inside a group is dropped.
Follow-up keys are published before any write (as stage 1 publishes before it deletes), so
a crash between the writes replays the batch with the same keys.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ragstream.common.derive import merge
from ragstream.common.models import (
    Collection,
    Mention,
    SearchRecord,
    is_relation_key,
    relation_key,
    split_relation_key,
)
from ragstream.common.storage.protocols import GraphStore, SearchStore
from ragstream.indexer.resolution.resolver import Resolved, Resolver
from ragstream.indexer.stages.merge_records import ALONE, Aliases


@dataclass(frozen=True, slots=True)
class KeyPlan:
    """What one key of a batch merges: no mentions means delete its records."""

    mentions: list[Mention] = field(default_factory=list)
    aliases: Aliases = ALONE


@dataclass(frozen=True, slots=True)
class BatchPlan:
    keys: dict[str, KeyPlan]
    follow_ups: set[str]
    resolved: Resolved
    """The groups the plan rests on, to check after the writes (`moved_since`)."""


class ResolvedMerge:
    def __init__(
        self, resolver: Resolver, search: SearchStore, graph: GraphStore, concurrent: bool = False
    ) -> None:
        """`concurrent`: other stage-2 consumers may merge while this one does (Kafka, or
        more than one indexer process), so a batch checks its groups after its writes
        (`moved_since`). One consumer alone merges its batches one after another: a batch
        that changes a group then always finds the writes of the batches before it."""
        self._resolver = resolver
        self._search = search
        self._graph = graph
        self.concurrent = concurrent

    async def plan(self, ws: str, keys: Sequence[str]) -> BatchPlan:
        entities = [k for k in keys if not is_relation_key(k)]
        relations = [k for k in keys if is_relation_key(k)]
        resolved = await self._resolve(ws, keys)
        plans = {k: _entity_plan(k, resolved) for k in entities}
        plans |= await self._relation_plans(ws, relations, resolved)
        follow_ups = await self._follow_ups(ws, plans, resolved)
        follow_ups.update(_repointed(relations, resolved))
        return BatchPlan(plans, follow_ups - set(keys), resolved)

    async def moved_since(self, ws: str, keys: Sequence[str], before: Resolved) -> set[str]:
        """The keys of a batch whose groups moved after its plan read them: an entity whose
        group or canonical key changed, a relation one of whose ends did. Called after the
        batch's writes, which followed the old groups; published again, those keys are
        merged anew by their single writer. Another batch that changes a group finds the
        records to fix in the stores, so a write in flight then, planned before the change
        and landing after that batch looked, would otherwise stay stale (a relation kept
        under a key its end no longer is canonical for)."""
        now = await self._resolve(ws, keys, merging=False)

        def moved(entity: str) -> bool:
            old, new = before.canonical(entity), now.canonical(entity)
            return old != new or before.members(old) != now.members(new)

        out = {k for k in keys if not is_relation_key(k) and moved(k)}
        out |= {k for k in keys if is_relation_key(k) and any(map(moved, split_relation_key(k)))}
        return out

    async def _resolve(self, ws: str, keys: Sequence[str], merging: bool = True) -> Resolved:
        """The groups around a batch's entities and its relations' ends. `merging`: the
        batch's entities are about to be merged, so the resolver writes their name records
        first and reads their mentions. The check after the writes only reads: the plan
        wrote those names and only a key's own merge writes its name, and a key no evidence
        touches is its own group whatever its mentions."""
        entities = [k for k in keys if not is_relation_key(k)]
        ends = [e for k in keys if is_relation_key(k) for e in split_relation_key(k)]
        return await self._resolver.resolve(ws, [*entities, *ends], entities if merging else ())

    async def _relation_plans(
        self, ws: str, relations: list[str], resolved: Resolved
    ) -> dict[str, KeyPlan]:
        raw: dict[str, list[str]] = {}
        for key in relations:
            a, b = (resolved.canonical(e) for e in split_relation_key(key))
            if a != b and relation_key(a, b) == key:
                raw[key] = sorted(
                    {relation_key(x, y) for x in resolved.members(a) for y in resolved.members(b)}
                )
        live = await self._resolver.live(ws, [k for ks in raw.values() for k in ks])
        plans: dict[str, KeyPlan] = {}
        for key in relations:
            if key not in raw:
                plans[key] = KeyPlan()
                continue
            merged = [k for k in raw[key] if k in live]
            source, target = split_relation_key(key)
            mentions = [
                replace(m, key=key, source=source, target=target) for k in merged for m in live[k]
            ]
            plans[key] = KeyPlan(mentions, Aliases(tuple(merged)) if merged != [key] else ALONE)
        return plans

    async def _follow_ups(self, ws: str, plans: dict[str, KeyPlan], resolved: Resolved) -> set[str]:
        follow_ups: set[str] = set()
        stale_edges: list[str] = []
        for key, plan in plans.items():
            if is_relation_key(key):
                continue
            canonical = resolved.canonical(key)
            if canonical != key:
                follow_ups.add(canonical)
            if canonical != key or not plan.mentions:
                stale_edges.append(key)
        left: set[str] = set()
        changed = await self._changed_groups(ws, plans, Collection.ENTITIES, follow_ups, left)
        await self._changed_groups(ws, plans, Collection.RELATIONS, follow_ups, set())
        # A member that left a group had its edges deleted when it joined: its raw relations
        # come back from the ledger, not from the graph.
        follow_ups.update(await self._resolver.relations_of(ws, left))
        follow_ups.update(await self._stale_around(ws, plans, resolved))
        around = await self._graph.edges_of(ws, stale_edges + changed)
        follow_ups.update(relation_key(e.source, e.target) for es in around.values() for e in es)
        return follow_ups

    async def _changed_groups(
        self,
        ws: str,
        plans: dict[str, KeyPlan],
        collection: Collection,
        follow_ups: set[str],
        left: set[str],
    ) -> list[str]:
        """Adds the keys a group change leaves stale, and to `left` the members that left a
        group; returns the keys whose group changed."""
        keys = [k for k in plans if is_relation_key(k) == (collection is Collection.RELATIONS)]
        stored = {r.id: r for r in await self._search.get(collection, ws, keys)}
        others = {m for k in keys for m in plans[k].aliases.members if m != k}
        with_records = await self._search.existing(collection, ws, sorted(others))
        changed: list[str] = []
        for key in keys:
            members = set(plans[key].aliases.members) or ({key} if plans[key].mentions else set())
            old = _members(stored.get(key), key)
            left.update(old - members - {key})
            follow_ups.update((old - members - {key}) | (members & with_records))
            if old != members and (len(old) > 1 or len(members) > 1):
                changed.append(key)
        return changed

    async def _stale_around(
        self, ws: str, plans: dict[str, KeyPlan], resolved: Resolved
    ) -> set[str]:
        """The live keys the evidence walk reached, outside the batch, whose stored records
        disagree with their group now: a canonical key whose members changed, a member that
        still has records (a key without records is left to its own merge, which stage 1
        published with its mentions). A member whose only document is deleted may meet its
        group at a key that is no entity ("IBM Corporation" and "IBM Corp." at "ibm"): its
        own merge finds no record to fix, so the group is fixed from the keys around it."""
        around = sorted(set(resolved.mentions) - set(plans))
        stored = {r.id: r for r in await self._search.get(Collection.ENTITIES, ws, around)}
        stale: set[str] = set()
        for key in around:
            record = stored.get(key)
            if record is None:
                continue  # nothing stored to disagree; a live key's own merge is on its way
            if resolved.canonical(key) != key or _members(record, key) != set(
                resolved.members(key)
            ):
                stale.add(key)
        return stale


def _repointed(relations: list[str], resolved: Resolved) -> set[str]:
    """The relation keys between the canonical keys of raw relations whose endpoints were
    merged into a group: the raw key's merge deletes its records, the canonical one's
    merges its mentions with those of the group's other members."""
    found: set[str] = set()
    for key in relations:
        a, b = (resolved.canonical(e) for e in split_relation_key(key))
        if a != b and relation_key(a, b) != key:
            found.add(relation_key(a, b))
    return found


def _entity_plan(key: str, resolved: Resolved) -> KeyPlan:
    if resolved.canonical(key) != key:
        return KeyPlan()
    members = resolved.members(key)
    found = [m for k in members for m in resolved.mentions.get(k, [])]
    if len(members) == 1:
        return KeyPlan(found)
    # The group's name is its canonical member's own (the vote over that member's mentions).
    name = merge(key, resolved.mentions.get(key, [])).name
    aliases = Aliases(members, tuple(sorted({m.name for m in found})))
    return KeyPlan([replace(m, key=key, name=name) for m in found], aliases)


def _members(record: SearchRecord | None, key: str) -> set[str]:
    """The members a stored record was merged from: itself alone unless it lists others."""
    if record is None:
        return set()
    listed = record.attrs.get("members")
    return {str(k) for k in listed} if isinstance(listed, list) and listed else {key}
