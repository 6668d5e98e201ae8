"""Entity names embedded alone, and the names near each other: the candidates of the check.

Stage 2 keeps one record per live entity key in `Collection.NAMES` (id: the key; text and
vector: its voted display name; attrs: name and type), written by that key's own merge, so
the collection holds exactly the keys with live mentions. Two keys are a candidate pair when
their names' vectors are at `similarity` or more and their types are compatible (equal, or
one a fallback type). A name with `limit` or more such neighbours is a hub (a generic name:
one of forty numbered routes) and makes no pair, so the relation is symmetric and a function
of the live names alone, whatever the order in which they arrived. A hub's neighbours are
still listed (up to `SEARCHED` times `limit`): a name arriving near a name can make it a hub,
and the walk must reach the names that hub was joined to, whose groups change with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragstream.common.derive import FALLBACK_TYPES
from ragstream.common.models import Collection, SearchFilter, SearchRecord, Vector
from ragstream.common.providers.embedding import Embedder
from ragstream.common.storage.protocols import SearchStore
from ragstream.indexer.resolution.member import Member

NAMES = Collection.NAMES
SEARCHES_PER_READ = 256
"""Names searched in one call of the store (one read of the embedded store, one request of
Elasticsearch's multi-search per 64): a batch of thousands of new names costs a few round
trips. The embedded store scores a read's names with one matrix product that picks the
rows near the threshold, each picked row then scored as one search scores it
(`DenseIndex.search_many`, the same neighbours to the bit): a read holds a reader thread
about 75 ms over 33,000 names (2Wiki's), against 0.6 s for 256 searches one by one."""
SEARCHED = 4
"""Neighbours listed per name: `SEARCHED` x `limit` (a hub's partners of before are among
them unless more than that many names arrived near it at once)."""


@dataclass(frozen=True, slots=True)
class Named:
    """A live entity key's name record."""

    key: str
    name: str
    type: str


@dataclass(frozen=True, slots=True)
class Near:
    """The names at the threshold or more from one key's name (itself left out)."""

    named: Named
    neighbours: tuple[tuple[Named, float], ...]
    hub: bool
    """`limit` neighbours or more: the name makes no pair."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """Two live keys whose names are near: put to the LLM unless a rule decided them."""

    a: Named
    b: Named
    score: float


class NameIndex:
    def __init__(
        self, search: SearchStore, embedder: Embedder, similarity: float, limit: int
    ) -> None:
        self._search = search
        self._embedder = embedder
        self._similarity = similarity
        self._limit = limit

    async def update(self, ws: str, live: Mapping[str, Member], gone: Sequence[str]) -> set[str]:
        """Writes the name records of the `live` keys and deletes those of `gone`; returns
        the keys that were near a name deleted or renamed (their groups may change)."""
        keys = [*live, *gone]
        stored = {r.id: r for r in await self._search.get(NAMES, ws, keys)}
        renamed = [k for k in live if k in stored and stored[k].text != live[k].name]
        new = [k for k in live if k not in stored or k in renamed]
        vectors = list(await self._embedder.embed([live[k].name for k in new])) if new else []
        fresh = dict(zip(new, vectors, strict=True))
        records = [
            _record(ws, key, member, fresh[key] if key in fresh else stored[key].vector)
            for key, member in live.items()
            if key in fresh or _attrs(member) != dict(stored[key].attrs)
        ]
        before = [stored[k] for k in [*gone, *renamed] if k in stored]
        near = await self._near_vectors(ws, [(r.id, r.vector) for r in before])
        await self._search.upsert(NAMES, records)
        await self._search.delete(NAMES, ws, [k for k in gone if k in stored])
        return {n.key for found in near.values() for n, _ in found} - set(keys)

    async def near(self, ws: str, keys: Sequence[str]) -> dict[str, Near]:
        """Each key's near names (the keys without a name record are left out)."""
        records = await self._search.get(NAMES, ws, keys)
        found = await self._near_vectors(ws, [(r.id, r.vector) for r in records])
        return {
            r.id: Near(_named(r), tuple(found[r.id]), len(found[r.id]) >= self._limit)
            for r in records
        }

    async def _near_vectors(
        self, ws: str, vectors: Sequence[tuple[str, Vector]]
    ) -> dict[str, list[tuple[Named, float]]]:
        found: dict[str, list[tuple[Named, float]]] = {}
        for start in range(0, len(vectors), SEARCHES_PER_READ):
            page = vectors[start : start + SEARCHES_PER_READ]
            hits = await self._search.search_vectors(
                NAMES,
                ws,
                [vector for _, vector in page],
                SearchFilter(),
                SEARCHED * self._limit,
                self._similarity,
            )
            for (key, _), near in zip(page, hits, strict=True):
                found[key] = [(_named(h.record), h.score) for h in near if h.record.id != key]
        return found


def candidates(near: Mapping[str, Near]) -> list[Candidate]:
    """The pairs of keys, both searched and neither a hub, whose names are near and whose
    types are compatible; each pair once, sorted."""
    pairs: dict[tuple[str, str], Candidate] = {}
    for found in near.values():
        if found.hub:
            continue
        for other, score in found.neighbours:
            if other.key not in near or near[other.key].hub:
                continue
            a, b = sorted((found.named, near[other.key].named), key=lambda n: n.key)
            if compatible(a.type, b.type):
                pairs[a.key, b.key] = Candidate(a, b, round(score, 6))
    return [pairs[k] for k in sorted(pairs)]


def compatible(a: str, b: str) -> bool:
    return a == b or a in FALLBACK_TYPES or b in FALLBACK_TYPES


def _attrs(member: Member) -> dict[str, str]:
    return {"name": member.name, "type": member.type}


def _record(ws: str, key: str, member: Member, vector: Vector) -> SearchRecord:
    return SearchRecord(key, ws, member.name, (), vector, (), attrs=_attrs(member))


def _named(record: SearchRecord) -> Named:
    attrs = record.attrs
    return Named(record.id, str(attrs.get("name", record.text)), str(attrs.get("type", "")))
