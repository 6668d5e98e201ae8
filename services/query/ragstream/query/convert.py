"""Proto <-> domain conversion for the gRPC layer, with request validation.

A bad field raises InvalidField naming it; the servicer turns that into INVALID_ARGUMENT.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from ragstream.common.config import WORKSPACE_PATTERN, QueryDefaults
from ragstream.common.models import DocState, DocumentRecord, SearchFilter
from ragstream.common.providers.llm import ChatMessage
from ragstream.query.types import Mode, QueryInput, QueryOptions, Reference, Retrieval
from ragstream.v1 import common_pb2, query_pb2

MAX_QUERY_CHARS = 8000
_WORKSPACE = re.compile(WORKSPACE_PATTERN)
_MODES = {
    query_pb2.QUERY_MODE_LOCAL: Mode.LOCAL,
    query_pb2.QUERY_MODE_GLOBAL: Mode.GLOBAL,
    query_pb2.QUERY_MODE_HYBRID: Mode.HYBRID,
    query_pb2.QUERY_MODE_MIX: Mode.MIX,
    query_pb2.QUERY_MODE_NAIVE: Mode.NAIVE,
    query_pb2.QUERY_MODE_BYPASS: Mode.BYPASS,
}
MODE_TO_PROTO = {mode: number for number, mode in _MODES.items()}
_STATES = {
    DocState.PENDING: common_pb2.DOCUMENT_STATE_PENDING,
    DocState.PROCESSING: common_pb2.DOCUMENT_STATE_PROCESSING,
    DocState.PROCESSED: common_pb2.DOCUMENT_STATE_PROCESSED,
    DocState.FAILED: common_pb2.DOCUMENT_STATE_FAILED,
    DocState.DELETED: common_pb2.DOCUMENT_STATE_DELETED,
}
STATE_FROM_PROTO = {number: state for state, number in _STATES.items()}


ROLES: dict[str, Literal["system", "user", "assistant"]] = {
    "system": "system",
    "user": "user",
    "assistant": "assistant",
}


class InvalidField(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def workspace_of(value: str, default: str) -> str:
    workspace = value or default
    if not _WORKSPACE.match(workspace):
        raise InvalidField("workspace", "must be 1-64 letters, digits, '_' or '-'")
    return workspace


def _positive_or_default(field: str, value: int, default: int) -> int:
    if value < 0:
        raise InvalidField(f"params.{field}", "must not be negative")
    return value or default


def query_input(
    workspace: str,
    query: str,
    params: query_pb2.QueryParams,
    search_filter: common_pb2.SearchFilter,
    defaults: QueryDefaults,
    default_workspace: str,
) -> QueryInput:
    if not query.strip():
        raise InvalidField("query", "must not be empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidField("query", f"must be at most {MAX_QUERY_CHARS} characters")
    return QueryInput(
        workspace=workspace_of(workspace, default_workspace),
        query=query,
        options=query_options(params, defaults),
        search_filter=to_filter(search_filter),
    )


def query_options(p: query_pb2.QueryParams, d: QueryDefaults) -> QueryOptions:
    if p.mode and p.mode not in _MODES:
        raise InvalidField("params.mode", f"unknown mode {p.mode}")
    if p.kg_chunk_pick_method not in (0, 1, 2):
        raise InvalidField("params.kg_chunk_pick_method", "unknown method")
    threshold = p.cosine_threshold if p.HasField("cosine_threshold") else d.cosine_threshold
    if not -1.0 <= threshold <= 1.0:
        raise InvalidField("params.cosine_threshold", "must be between -1 and 1")
    pick = {1: "VECTOR", 2: "WEIGHT"}.get(p.kg_chunk_pick_method, d.kg_chunk_pick_method)
    return QueryOptions(
        mode=_MODES.get(p.mode, Mode(d.mode)),
        top_k=_positive_or_default("top_k", p.top_k, d.top_k),
        chunk_top_k=_positive_or_default("chunk_top_k", p.chunk_top_k, d.chunk_top_k),
        max_entity_tokens=_positive_or_default(
            "max_entity_tokens", p.max_entity_tokens, d.max_entity_tokens
        ),
        max_relation_tokens=_positive_or_default(
            "max_relation_tokens", p.max_relation_tokens, d.max_relation_tokens
        ),
        max_total_tokens=_positive_or_default(
            "max_total_tokens", p.max_total_tokens, d.max_total_tokens
        ),
        related_chunk_number=_positive_or_default(
            "related_chunk_number", p.related_chunk_number, d.related_chunk_number
        ),
        chunk_pick_method=pick,
        cosine_threshold=threshold,
        enable_rerank=p.enable_rerank if p.HasField("enable_rerank") else True,
        min_rerank_score=p.min_rerank_score,
        only_need_context=p.only_need_context,
        only_need_prompt=p.only_need_prompt,
        response_type=p.response_type or d.response_type,
        history=history(p),
        user_prompt=p.user_prompt,
        hl_keywords=tuple(p.hl_keywords),
        ll_keywords=tuple(p.ll_keywords),
        include_references=p.include_references if p.HasField("include_references") else True,
    )


def history(p: query_pb2.QueryParams) -> tuple[ChatMessage, ...]:
    messages = []
    for i, message in enumerate(p.conversation_history):
        role = ROLES.get(message.role)
        if role is None:
            field = f"params.conversation_history[{i}].role"
            raise InvalidField(field, "must be 'system', 'user' or 'assistant'")
        messages.append(ChatMessage(role, message.content))
    return tuple(messages)


def to_filter(f: common_pb2.SearchFilter) -> SearchFilter:
    time_from = f.time_from.ToNanoseconds() / 1e9 if f.HasField("time_from") else None
    time_to = f.time_to.ToNanoseconds() / 1e9 if f.HasField("time_to") else None
    if time_from is not None and time_to is not None and time_from >= time_to:
        raise InvalidField("filter.time_from", "must be before filter.time_to")
    return SearchFilter(
        doc_ids=frozenset(f.doc_ids),
        metadata=dict(f.metadata),
        time_from=time_from,
        time_to=time_to,
    )


def context_pb(retrieval: Retrieval) -> query_pb2.Context:
    return query_pb2.Context(
        entities=[
            query_pb2.ContextEntity(
                name=e.name,
                type=e.type,
                description=e.description,
                score=e.score,
                source_doc_ids=e.doc_ids,
            )
            for e in retrieval.entities
        ],
        relations=[
            query_pb2.ContextRelation(
                source=r.source,
                target=r.target,
                keywords=r.keywords,
                description=r.description,
                weight=r.weight,
                score=r.score,
                source_doc_ids=r.doc_ids,
            )
            for r in retrieval.relations
        ],
        chunks=[
            query_pb2.ContextChunk(
                chunk_id=c.chunk_id,
                doc_id=c.doc_id,
                file_path=c.file_path,
                content=c.content,
                score=c.score,
                reference_id=c.reference_id,
            )
            for c in retrieval.chunks
        ],
        keywords=query_pb2.Keywords(
            high_level=retrieval.keywords.high, low_level=retrieval.keywords.low
        ),
    )


def references_pb(references: Sequence[Reference]) -> list[query_pb2.Reference]:
    return [
        query_pb2.Reference(reference_id=r.reference_id, doc_id=r.doc_id, file_path=r.file_path)
        for r in references
    ]


def status_pb(record: DocumentRecord) -> common_pb2.DocumentStatus:
    status = common_pb2.DocumentStatus(
        workspace=record.workspace,
        doc_id=record.doc_id,
        version=record.version,
        state=_STATES[record.state],
        error=record.error,
        file_path=record.file_path,
        content_hash=record.content_hash,
        chunk_count=len(record.chunk_ids),
        entity_count=record.entity_count,
        relation_count=record.relation_count,
        processing_ms=record.processing_ms,
    )
    status.created_at.FromNanoseconds(int(record.created_at * 1e9))
    status.updated_at.FromNanoseconds(int(record.updated_at * 1e9))
    return status
