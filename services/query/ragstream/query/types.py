"""The query service's record types: a resolved request and what retrieval returns."""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from opentelemetry.trace import Span

from ragstream.common.models import Hit, Provenance, SearchFilter, Vector
from ragstream.common.providers.llm import ChatMessage
from ragstream.query.prefetch import EarlyRead, Prefetch

if TYPE_CHECKING:
    from ragstream.query.community_search import CommunityContext


class Mode(enum.StrEnum):
    LOCAL = "local"
    GLOBAL = "global"
    HYBRID = "hybrid"
    MIX = "mix"
    NAIVE = "naive"
    BYPASS = "bypass"
    COMMUNITY = "community"
    """The community reports (community_search.py), not the entity and chunk searches."""

    @property
    def searches_entities(self) -> bool:
        """Local level: entities by the low-level keywords."""
        return self in (Mode.LOCAL, Mode.HYBRID, Mode.MIX)

    @property
    def searches_relations(self) -> bool:
        """Global level: relations by the high-level keywords."""
        return self in (Mode.GLOBAL, Mode.HYBRID, Mode.MIX)

    @property
    def searches_chunks(self) -> bool:
        return self in (Mode.NAIVE, Mode.MIX)


class Rewrite(enum.StrEnum):
    """How the LLM rewrites the question before the searches (stages/rewrite.py)."""

    NONE = "none"
    HYDE = "hyde"
    MULTI_QUERY = "multi_query"


@dataclass(frozen=True, slots=True)
class QueryOptions:
    """LightRAG's query parameters with the server defaults filled in."""

    mode: Mode
    top_k: int
    chunk_top_k: int
    max_entity_tokens: int
    max_relation_tokens: int
    max_total_tokens: int
    related_chunk_number: int
    chunk_pick_method: str
    cosine_threshold: float
    enable_rerank: bool
    min_rerank_score: float
    only_need_context: bool
    only_need_prompt: bool
    response_type: str
    history: tuple[ChatMessage, ...] = ()
    user_prompt: str = ""
    hl_keywords: tuple[str, ...] = ()
    ll_keywords: tuple[str, ...] = ()
    include_references: bool = True
    rewrite: Rewrite = Rewrite.NONE
    max_sub_queries: int = 3


@dataclass(frozen=True, slots=True)
class QueryInput:
    workspace: str
    query: str
    options: QueryOptions
    search_filter: SearchFilter = field(default_factory=SearchFilter)
    deadline: float | None = None
    """The caller's deadline on the `time.monotonic()` clock; None: no deadline. Stages
    that trade quality for time (a degraded rerank) read it; the transport enforces it."""

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


@dataclass(frozen=True, slots=True)
class Reference:
    """A cited passage: one document's chunks on the same pages under the same section."""

    reference_id: str
    doc_id: str
    file_path: str
    title: str = ""
    first_page: int = 0
    """1-based; 0: the document has no pages."""
    last_page: int = 0
    section: tuple[str, ...] = ()
    chunk_ids: tuple[str, ...] = ()
    """The context chunks this reference stands for."""


@dataclass(frozen=True, slots=True)
class ContextChunk:
    chunk_id: str
    doc_id: str
    file_path: str
    content: str
    score: float
    tokens: int
    reference_id: str = ""
    title: str = ""
    """The document's title (its metadata's), for a reference a person can read."""
    provenance: Provenance = field(default_factory=Provenance)


@dataclass(frozen=True, slots=True)
class ContextEntity:
    key: str
    name: str
    type: str
    description: str
    score: float
    doc_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    """The other names resolution merged into the entity."""


@dataclass(frozen=True, slots=True)
class ContextRelation:
    key: str
    source: str
    """Display name of one endpoint."""
    target: str
    keywords: str
    description: str
    weight: float
    score: float
    doc_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Keywords:
    high: tuple[str, ...] = ()
    """Themes: searched against relations (global)."""
    low: tuple[str, ...] = ()
    """Specific names and things: searched against entities (local)."""


@dataclass(slots=True)
class Retrieval:
    """The grounded context of one query."""

    chunks: list[ContextChunk] = field(default_factory=list)
    entities: list[ContextEntity] = field(default_factory=list)
    relations: list[ContextRelation] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    keywords: Keywords = field(default_factory=Keywords)
    notes: list[str] = field(default_factory=list)
    query_terms: tuple[str, ...] = ()
    nothing_allowed: bool = False
    """The caller's filter allows no document: nothing was searched, nothing may be said."""
    workspace_empty: bool = False
    """The workspace holds no indexed chunk: there was nothing to search (stages/empty.py)."""
    community: CommunityContext | None = None
    """Mode `community`: the chosen reports and their points (community_search.py)."""


@dataclass(slots=True)
class QueryState:
    """What the stages of one query read and write, in pipeline order (engine.py)."""

    q: QueryInput
    result: Retrieval
    allowed: frozenset[str] | None = None
    """Documents the caller's filter allows (the filter stage); None: no filter."""
    texts: dict[str, str] = field(default_factory=dict)
    """What each search embeds: "query", "low" (local keywords), "high" (global)."""
    vectors: dict[str, Vector] = field(default_factory=dict)
    """The embedding of each text in `texts`, by the text itself."""
    entity_groups: dict[str, list[ContextEntity]] = field(default_factory=dict)
    """The entities each level's search found, by level ("low": local, "high": global)."""
    relation_groups: dict[str, list[ContextRelation]] = field(default_factory=dict)
    chunk_hits: list[Hit] = field(default_factory=list)
    """The chunk search's hits (naive and mix)."""
    hypothetical: str = ""
    """HyDE: the LLM's hypothetical answer, embedded for the dense searches instead."""
    sub_queries: tuple[str, ...] = ()
    """multi_query: the LLM's sub-queries, searched beside the question (stages/rewrite.py)."""
    graph_sources: list[list[str]] = field(default_factory=list)
    """Chunk ids picked for the entities, then for the relations."""
    done: bool = False
    """Set by a stage when nothing further can be found (a filter that allows nothing)."""
    prefetch: Prefetch | None = None
    """The reads started while the texts are embedded (prefetch.py)."""

    def vector(self, name: str) -> Vector | None:
        return self.vectors.get(self.texts.get(name, ""))

    def search_filter(self) -> SearchFilter:
        """The documents-only filter every search runs with once the filter stage ran."""
        return SearchFilter() if self.allowed is None else SearchFilter(doc_ids=self.allowed)


class Stage(Protocol):
    """One step of the query pipeline; the engine times and traces it as span `name`."""

    name: str

    def applies(self, state: QueryState) -> bool:
        """Whether the step runs for this query (its mode, options and what came before)."""
        ...

    async def run(self, state: QueryState, span: Span) -> None:
        """Reads and writes `state`; annotates `span` with its counts."""
        ...


class SearchStage(Stage, Protocol):
    """A search stage with reads known before the vectors are (prefetch.py)."""

    def early(self, state: QueryState) -> Sequence[EarlyRead]:
        """The reads `run` will make for this query that need no vector, in any order."""
        ...
