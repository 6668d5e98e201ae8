"""Record types shared by the indexer and the query service.

Plain frozen dataclasses: storage backends, stages and the gRPC layer convert to and
from these, so nothing above the storage layer sees a backend's own types.
"""

from __future__ import annotations

import enum
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
"""A 1-D float32 embedding, L2-normalized by the embedder (cosine = dot product)."""


class Collection(enum.StrEnum):
    """What a search-store record is."""

    CHUNKS = "chunks"
    ENTITIES = "entities"
    RELATIONS = "relations"
    COMMUNITIES = "communities"
    """Community reports (id: the community's)."""
    NAMES = "names"
    """Each live entity key's own name, embedded alone (id: the key): the name-vector
    candidates of entity resolution's check (indexer/resolution/names.py)."""


class DocState(enum.StrEnum):
    """Lifecycle of a document; mirrors ragstream.v1.DocumentState."""

    PENDING = "pending"
    PROCESSING = "processing"
    PROCESSED = "processed"
    FAILED = "failed"
    DELETED = "deleted"


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Restricts a search to part of a workspace; applied inside the search, never after."""

    doc_ids: frozenset[str] | None = None
    """Only records of these documents. None: no restriction; an empty set allows nothing
    (a caller's filter that matched no document must never widen into "everything")."""
    metadata: Mapping[str, str] = field(default_factory=dict)
    """Every key must be present in the document's metadata with exactly this value."""
    time_from: float | None = None
    """Document timestamp (epoch seconds) at or after this."""
    time_to: float | None = None
    """Document timestamp (epoch seconds) before this."""

    @classmethod
    def nothing(cls) -> SearchFilter:
        """The filter that allows no record at all."""
        return cls(doc_ids=frozenset())

    @property
    def allows_nothing(self) -> bool:
        return self.doc_ids is not None and not self.doc_ids

    @property
    def unrestricted(self) -> bool:
        """True when the filter lets every record of the workspace through."""
        return (
            self.doc_ids is None
            and not self.metadata
            and self.time_from is None
            and self.time_to is None
        )


@dataclass(frozen=True, slots=True)
class SearchRecord:
    """One searchable item (a chunk, an entity, a relation or a community report) in the
    search store."""

    id: str
    """Deterministic id: chunk id, entity key or relation key."""
    workspace: str
    text: str
    """What is returned to the caller (chunk content, entity description, ...)."""
    terms: tuple[str, ...]
    """BM25 terms from our analyzer (so every backend segments text identically)."""
    vector: Vector
    doc_ids: tuple[str, ...]
    """Documents the record comes from (one for a chunk; several for an entity)."""
    metadata: Mapping[str, str] = field(default_factory=dict)
    """The source document's metadata (chunks), for metadata filters."""
    timestamp: float | None = None
    """The source document's timestamp (epoch seconds), for time-range filters."""
    attrs: Mapping[str, Any] = field(default_factory=dict)
    """Collection-specific fields, JSON-serializable (file_path, order, tokens, name, ...)."""

    @property
    def aliases(self) -> tuple[str, ...]:
        """An entity's other names, merged into it by entity resolution; () if none."""
        return tuple(str(a) for a in self.attrs.get("aliases") or ())


NO_VECTOR: Vector = np.empty(0, dtype=np.float32)
"""The vector of a hit's record (see Hit)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """A search result: the record and its score under the search that found it. The record
    comes without its terms and vector (`terms` empty, `vector` of length 0): no caller of a
    search reads them, and decoding them was most of a hit's cost; `get` returns them."""

    record: SearchRecord
    score: float


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a chunk sits in its document, so a citation names a passage a reader can check.

    The page numbers and the section are read from the chunk's own text and what comes before
    it (common/text/provenance.py); the offsets are into the document's text as published.
    All of it is recomputed at each version, and a kept chunk's stored copy is refreshed
    when it moved (indexer/stages/write.py), so an edit before a chunk never leaves it stale.
    """

    start: int = 0
    """Offset of the chunk's first character in the document's text."""
    end: int = 0
    """Offset just past its last character."""
    first_page: int = 0
    """1-based page of its first character; 0: the document has no pages."""
    last_page: int = 0
    section: tuple[str, ...] = ()
    """The headings it sits under, outermost first (Markdown `#` headings)."""

    def attrs(self) -> dict[str, Any]:
        """The stored form (SearchRecord.attrs), JSON-serializable."""
        return {
            "start": self.start,
            "end": self.end,
            "pages": [self.first_page, self.last_page] if self.first_page else [],
            "section": list(self.section),
        }

    @classmethod
    def of(cls, attrs: Mapping[str, Any]) -> Provenance:
        """From the stored form; a chunk stored without one has none (all zero)."""
        pages = attrs.get("pages") or [0, 0]
        return cls(
            start=int(attrs.get("start", 0)),
            end=int(attrs.get("end", 0)),
            first_page=int(pages[0]),
            last_page=int(pages[-1]),
            section=tuple(str(s) for s in attrs.get("section", ())),
        )


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document, the unit of retrieval."""

    id: str
    """hash(workspace, doc_id, content): unchanged text keeps its id across edits."""
    workspace: str
    doc_id: str
    content: str
    tokens: int
    order: int
    """Position of the chunk in its document (0-based)."""
    file_path: str = ""
    provenance: Provenance = field(default_factory=Provenance)


@dataclass(slots=True)
class DocumentRecord:
    """The indexer's state of one document (status, identity, chunk list)."""

    workspace: str
    doc_id: str
    version: int
    state: DocState
    content_hash: str = ""
    file_path: str = ""
    metadata: Mapping[str, str] = field(default_factory=dict)
    timestamp: float | None = None
    error: str = ""
    chunk_ids: tuple[str, ...] = ()
    entity_count: int = 0
    relation_count: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    processing_ms: float = 0.0


class MentionKind(enum.StrEnum):
    ENTITY = "entity"
    RELATION = "relation"
    SAME_AS = "same_as"
    """Same-as evidence: the chunk says its `source` entity is also named otherwise (the
    entity resolution ledger, `ragstream.indexer.resolution.evidence`)."""


@dataclass(frozen=True, slots=True)
class Mention:
    """What one chunk says about one entity or relation: the ledger entities derive from.

    Entities and relations are never edited in place; they are re-derived from all of their
    mentions (stage 2), so deleting a chunk's mentions removes exactly what it contributed.
    """

    workspace: str
    chunk_id: str
    doc_id: str
    kind: MentionKind
    key: str
    """Entity key (normalized name) or relation key (the sorted pair of entity keys)."""
    name: str = ""
    """Entity: the name as written. Relation: empty."""
    source: str = ""
    """Relation: one endpoint's entity key (sorted first). Entity: empty."""
    target: str = ""
    """Relation: the other endpoint's entity key. Entity: empty."""
    type: str = ""
    """Entity type (e.g. person, organization); empty for relations."""
    description: str = ""
    keywords: str = ""
    """Relation keywords, comma-separated; empty for entities."""
    weight: float = 1.0
    file_path: str = ""


@dataclass(frozen=True, slots=True)
class GraphNode:
    """An entity in the graph store."""

    key: str
    """Normalized name; unique per workspace."""
    name: str
    """Display name (the most frequent spelling among mentions)."""
    type: str
    description: str
    source_ids: tuple[str, ...] = ()
    """Chunk ids that mention the entity (capped)."""
    doc_ids: tuple[str, ...] = ()
    """Documents that mention the entity."""


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """A relation in the graph store; undirected, stored with source <= target."""

    source: str
    target: str
    keywords: str
    description: str
    weight: float
    source_ids: tuple[str, ...] = ()
    doc_ids: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return relation_key(self.source, self.target)


@dataclass(frozen=True, slots=True)
class GraphStats:
    """The size of one workspace's graph, and its best-connected nodes."""

    nodes: int
    edges: int
    top: tuple[tuple[str, int], ...] = ()
    """(node key, degree) of the nodes with the most edges, most first, ties by key; only
    nodes that exist and have at least one edge."""


RELATION_KEY_MARK = "\u241e"
"""Joins the two entity keys of a relation key; no normalized entity name contains it."""


_WHITESPACE = re.compile(r"\s+")


def entity_key(name: str) -> str:
    """The merge key of an entity name: NFKC, trimmed, inner whitespace collapsed, casefolded.

    What makes "Tern S3", "tern  s3" and "ＴＥＲＮ Ｓ3" one entity. Keys are stable across
    releases: changing this function changes every stored key, so it needs a re-index.
    """
    normalized = unicodedata.normalize("NFKC", name)
    return _WHITESPACE.sub(" ", normalized).strip().casefold()


def relation_key(a: str, b: str) -> str:
    """The key of the undirected relation between two entity keys: (A, B) == (B, A)."""
    return f"{a}{RELATION_KEY_MARK}{b}" if a <= b else f"{b}{RELATION_KEY_MARK}{a}"


def split_relation_key(key: str) -> tuple[str, str]:
    first, _, second = key.partition(RELATION_KEY_MARK)
    return first, second


def is_relation_key(key: str) -> bool:
    return RELATION_KEY_MARK in key


SAME_AS_KEY_MARK = "\u241d"
"""Starts the ledger key of an entity's same-as evidence; no normalized entity name holds it."""


def same_as_key(entity: str) -> str:
    """The ledger key of the same-as evidence about one entity key."""
    return f"{SAME_AS_KEY_MARK}{entity}"


def same_as_entity(key: str) -> str | None:
    """The entity key a same-as ledger key is about; None for any other key."""
    return key[1:] if key.startswith(SAME_AS_KEY_MARK) else None
