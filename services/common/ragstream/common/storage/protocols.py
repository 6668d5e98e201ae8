"""The storage roles the pipeline calls, one narrow Protocol each.

Every backend (embedded SQLite, Elasticsearch, NebulaGraph) implements these and passes
the same contract suite in tests/contract/. Every method is scoped by workspace: no
call can see another workspace's records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ragstream.common.communities import CommunityRecord
from ragstream.common.models import (
    Collection,
    DocState,
    DocumentRecord,
    GraphEdge,
    GraphNode,
    GraphStats,
    Hit,
    Mention,
    SearchFilter,
    SearchRecord,
    Vector,
)


class SearchStore(Protocol):
    """Chunks, entities and relations, searchable by BM25 terms and by dense vector."""

    async def upsert(self, collection: Collection, records: Sequence[SearchRecord]) -> None:
        """Insert or replace records by (workspace, id); durable on return."""
        ...

    async def delete(self, collection: Collection, workspace: str, ids: Sequence[str]) -> None:
        """Remove records; unknown ids are ignored."""
        ...

    async def get(
        self, collection: Collection, workspace: str, ids: Sequence[str], *, whole: bool = True
    ) -> list[SearchRecord]:
        """The records that exist among `ids`, in the order of `ids`. `whole=False` reads them
        as a search hit carries them (models.Hit: no terms, no vector), which is what a query
        needs and costs a fraction of decoding them whole."""
        ...

    async def existing(
        self, collection: Collection, workspace: str, ids: Sequence[str]
    ) -> set[str]:
        """Which of `ids` exist: `get` without reading the records."""
        ...

    async def search_terms(
        self,
        collection: Collection,
        workspace: str,
        terms: Sequence[str],
        search_filter: SearchFilter,
        limit: int,
    ) -> list[Hit]:
        """BM25 over the records' terms; best first; `search_filter` restricts the candidates."""
        ...

    async def search_vector(
        self,
        collection: Collection,
        workspace: str,
        vector: Vector,
        search_filter: SearchFilter,
        limit: int,
        min_score: float = -1.0,
    ) -> list[Hit]:
        """Cosine similarity (vectors are normalized); best first; hits below min_score dropped."""
        ...

    async def search_vectors(
        self,
        collection: Collection,
        workspace: str,
        vectors: Sequence[Vector],
        search_filter: SearchFilter,
        limit: int,
        min_score: float = -1.0,
    ) -> list[list[Hit]]:
        """`search_vector` for each of `vectors`, in their order, answered together: one
        round trip instead of one a vector (stage 2's near-name search asks thousands)."""
        ...

    async def similarities(
        self,
        collection: Collection,
        workspace: str,
        ids: Sequence[str],
        vector: Vector,
        search_filter: SearchFilter,
    ) -> dict[str, float]:
        """The cosine similarity to `vector` of each of `ids` that exists and passes the
        filter, by id, without reading the records (as searches see them)."""
        ...

    async def count(self, collection: Collection, workspace: str) -> int:
        """How many records the workspace holds in the collection."""
        ...

    async def close(self) -> None:
        """Releases the backend's connections (a no-op for the embedded store)."""
        ...


class DocumentStore(Protocol):
    """Per-document indexing state: version, content hash, status and chunk list."""

    async def get(self, workspace: str, doc_id: str) -> DocumentRecord | None: ...

    async def get_many(self, workspace: str, doc_ids: Sequence[str]) -> list[DocumentRecord]:
        """The records that exist among `doc_ids`, in the order of `doc_ids`."""
        ...

    async def put(self, record: DocumentRecord) -> None:
        """Insert or replace by (workspace, doc_id); durable on return."""
        ...

    async def list(
        self, workspace: str, state: DocState | None, limit: int, after: str = ""
    ) -> list[DocumentRecord]:
        """Records ordered by doc_id, starting after `after`; `state` None means all."""
        ...

    async def matching(self, workspace: str, search_filter: SearchFilter) -> set[str]:
        """Ids of the live documents that satisfy the filter (metadata, time range, ids)."""
        ...

    async def close(self) -> None:
        """Releases the backend's connections (a no-op for the embedded store)."""
        ...


class Closeable(Protocol):
    async def close(self) -> None: ...


class GraphStore(Protocol):
    """The knowledge graph: entities (nodes) and undirected relations (edges)."""

    async def upsert_nodes(self, workspace: str, nodes: Sequence[GraphNode]) -> None:
        """Insert or replace nodes by key."""
        ...

    async def upsert_edges(self, workspace: str, edges: Sequence[GraphEdge]) -> None:
        """Insert or replace edges by their (sorted) endpoint pair; endpoints need not exist."""
        ...

    async def delete_nodes(self, workspace: str, keys: Sequence[str]) -> None:
        """Remove nodes and every edge touching them."""
        ...

    async def delete_edges(self, workspace: str, pairs: Sequence[tuple[str, str]]) -> None:
        """Remove edges; each pair in either order."""
        ...

    async def get_nodes(self, workspace: str, keys: Sequence[str]) -> list[GraphNode]:
        """The nodes that exist among `keys`, in the order of `keys`."""
        ...

    async def get_edges(self, workspace: str, pairs: Sequence[tuple[str, str]]) -> list[GraphEdge]:
        """The edges that exist among `pairs` (either order), in the order of `pairs`."""
        ...

    async def edges_of(self, workspace: str, keys: Sequence[str]) -> dict[str, list[GraphEdge]]:
        """Every edge touching each key, in one round trip for all keys."""
        ...

    async def degrees(self, workspace: str, keys: Sequence[str]) -> dict[str, int]:
        """Number of edges touching each key (0 for unknown keys), in one round trip."""
        ...

    async def edges_among(self, workspace: str, keys: Sequence[str]) -> list[GraphEdge]:
        """Every edge whose two endpoints are both among `keys` (a self-loop too), each
        once, sorted by (source, target); one round trip however many keys."""
        ...

    async def stats(self, workspace: str, top: int) -> GraphStats:
        """How many nodes and edges the workspace holds, and its `top` nodes by degree.
        Reads the whole workspace's graph (an index scan, not a lookup by key)."""
        ...

    async def close(self) -> None:
        """Releases connections (a server backend's session pool)."""
        ...


class MentionStore(Protocol):
    """The mentions ledger: per chunk, what it says about entities and relations."""

    async def replace_chunk_mentions(
        self, workspace: str, chunk_id: str, mentions: Sequence[Mention]
    ) -> None:
        """Set the chunk's mentions (replacing any it had)."""
        ...

    async def replace_mentions(
        self, workspace: str, by_chunk: Mapping[str, Sequence[Mention]]
    ) -> None:
        """`replace_chunk_mentions` for many chunks in one write: a document's added chunks
        (a curated graph source has one per record, thousands)."""
        ...

    async def delete_chunks(self, workspace: str, chunk_ids: Sequence[str]) -> set[str]:
        """Remove the chunks' mentions; returns the keys they mentioned."""
        ...

    async def keys_of_chunks(self, workspace: str, chunk_ids: Sequence[str]) -> set[str]:
        """The entity and relation keys the chunks mention."""
        ...

    async def mentions_of(self, workspace: str, keys: Sequence[str]) -> dict[str, list[Mention]]:
        """All mentions of each key (keys without mentions are absent), ordered by chunk id."""
        ...

    async def close(self) -> None:
        """Releases the backend's connections (a no-op for the embedded store)."""
        ...


class CacheStore(Protocol):
    """LLM response cache, keyed by a hash of (model, prompt, parameters)."""

    async def get(self, key: str) -> str | None: ...

    async def put(self, key: str, value: str) -> None: ...

    async def close(self) -> None:
        """Releases the backend's connections (a no-op for the embedded store)."""
        ...


class CommunityStore(Protocol):
    """One workspace's hierarchical communities and their reports (stage 2 writes them, one
    writer per workspace; the query side reads)."""

    async def apply(
        self, workspace: str, upserts: Sequence[CommunityRecord], deletes: Sequence[str]
    ) -> None:
        """Deletes the communities `deletes` names, then inserts or replaces `upserts` by
        (workspace, id); durable and readable on return."""
        ...

    async def get(self, workspace: str, ids: Sequence[str]) -> list[CommunityRecord]:
        """The communities that exist among `ids`, in the order of `ids`."""
        ...

    async def of_entities(self, workspace: str, keys: Sequence[str]) -> dict[str, list[str]]:
        """The ids of the communities holding each key, top level first; keys in none are
        absent."""
        ...

    async def list(self, workspace: str, level: int | None = None) -> list[CommunityRecord]:
        """Every community of the workspace (of one level, unless None), by (level, id)."""
        ...

    async def close(self) -> None:
        """Releases the backend's connections (a no-op for the embedded store)."""
        ...


@dataclass(frozen=True, slots=True)
class DataStores:
    """The roles that live in `storage.search`'s backend: every one but the graph."""

    search: SearchStore
    docs: DocumentStore
    mentions: MentionStore
    cache: CacheStore
    communities: CommunityStore


@dataclass(frozen=True, slots=True)
class Stores:
    """Every storage role of a process, opened once by `ragstream.common.registry`."""

    search: SearchStore
    docs: DocumentStore
    mentions: MentionStore
    cache: CacheStore
    graph: GraphStore
    communities: CommunityStore

    @classmethod
    def of(cls, data: DataStores, graph: GraphStore) -> Stores:
        return cls(data.search, data.docs, data.mentions, data.cache, graph, data.communities)

    def all(self) -> tuple[Closeable, ...]:
        return (self.search, self.docs, self.mentions, self.cache, self.graph, self.communities)
