"""The query service's record types: a resolved request and what retrieval returns."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ragstream.common.models import SearchFilter
from ragstream.common.providers.llm import ChatMessage


class Mode(enum.StrEnum):
    LOCAL = "local"
    GLOBAL = "global"
    HYBRID = "hybrid"
    MIX = "mix"
    NAIVE = "naive"
    BYPASS = "bypass"


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


@dataclass(frozen=True, slots=True)
class QueryInput:
    workspace: str
    query: str
    options: QueryOptions
    search_filter: SearchFilter = field(default_factory=SearchFilter)


@dataclass(frozen=True, slots=True)
class Reference:
    reference_id: str
    doc_id: str
    file_path: str


@dataclass(frozen=True, slots=True)
class ContextChunk:
    chunk_id: str
    doc_id: str
    file_path: str
    content: str
    score: float
    tokens: int
    reference_id: str = ""


@dataclass(frozen=True, slots=True)
class ContextEntity:
    key: str
    name: str
    type: str
    description: str
    score: float
    doc_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]


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
