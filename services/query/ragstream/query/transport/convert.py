"""Proto <-> domain conversion for the gRPC layer.

Pure conversion: requests reach the handlers only after `validation` accepted them (the
server's interceptor runs it first), so nothing here checks a value again. Unset fields
take the server defaults here, in one place.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Sequence
from typing import Literal

from ragstream.common.config import QueryDefaults
from ragstream.common.events import DocumentChange
from ragstream.common.models import DocState, DocumentRecord, SearchFilter
from ragstream.common.providers.llm import ChatMessage
from ragstream.common.versions import Outcome
from ragstream.query.types import (
    Mode,
    QueryInput,
    QueryOptions,
    Reference,
    Retrieval,
    Rewrite,
)
from ragstream.v1 import common_pb2, ingest_pb2, query_pb2

_MODES = {
    query_pb2.QUERY_MODE_LOCAL: Mode.LOCAL,
    query_pb2.QUERY_MODE_GLOBAL: Mode.GLOBAL,
    query_pb2.QUERY_MODE_HYBRID: Mode.HYBRID,
    query_pb2.QUERY_MODE_MIX: Mode.MIX,
    query_pb2.QUERY_MODE_NAIVE: Mode.NAIVE,
    query_pb2.QUERY_MODE_BYPASS: Mode.BYPASS,
    query_pb2.QUERY_MODE_COMMUNITY: Mode.COMMUNITY,
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
_OUTCOMES = {
    Outcome.ACCEPTED: ingest_pb2.PUBLISH_OUTCOME_ACCEPTED,
    Outcome.DUPLICATE: ingest_pb2.PUBLISH_OUTCOME_DUPLICATE,
    Outcome.STALE: ingest_pb2.PUBLISH_OUTCOME_STALE,
    Outcome.DELETED: ingest_pb2.PUBLISH_OUTCOME_DELETED,
    Outcome.NOT_FOUND: ingest_pb2.PUBLISH_OUTCOME_NOT_FOUND,
}
_REWRITES = {
    query_pb2.QUERY_REWRITE_NONE: Rewrite.NONE,
    query_pb2.QUERY_REWRITE_HYDE: Rewrite.HYDE,
    query_pb2.QUERY_REWRITE_MULTI_QUERY: Rewrite.MULTI_QUERY,
}
_PICK_METHODS = {
    query_pb2.CHUNK_PICK_METHOD_VECTOR: "VECTOR",
    query_pb2.CHUNK_PICK_METHOD_WEIGHT: "WEIGHT",
}


ROLES: dict[str, Literal["system", "user", "assistant"]] = {
    "system": "system",
    "user": "user",
    "assistant": "assistant",
}


def workspace_of(value: str, default: str) -> str:
    """An empty workspace means the server's default one."""
    return value or default


def encode_page_token(doc_id: str) -> str:
    """ListDocuments pages by doc_id; the token is the last id of the previous page."""
    return base64.urlsafe_b64encode(doc_id.encode()).decode()


def decode_page_token(token: str) -> str:
    """The doc_id after which the next page starts; ValueError for a token not ours.
    Only the exact encoding `encode_page_token` makes is accepted (no lenient decoding)."""
    try:
        doc_id = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeError) as exc:
        raise ValueError("not a ListDocuments page token") from exc
    if encode_page_token(doc_id) != token:
        raise ValueError("not a ListDocuments page token")
    return doc_id


def query_input(
    workspace: str,
    query: str,
    params: query_pb2.QueryParams,
    search_filter: common_pb2.SearchFilter,
    defaults: QueryDefaults,
    default_workspace: str,
    deadline: float | None = None,
) -> QueryInput:
    return QueryInput(
        workspace=workspace_of(workspace, default_workspace),
        query=query,
        options=query_options(params, defaults),
        search_filter=to_filter(search_filter),
        deadline=deadline,
    )


def query_options(p: query_pb2.QueryParams, d: QueryDefaults) -> QueryOptions:
    threshold = p.cosine_threshold if p.HasField("cosine_threshold") else d.cosine_threshold
    return QueryOptions(
        mode=_MODES.get(p.mode, Mode(d.mode)),
        top_k=p.top_k or d.top_k,
        chunk_top_k=p.chunk_top_k or d.chunk_top_k,
        max_entity_tokens=p.max_entity_tokens or d.max_entity_tokens,
        max_relation_tokens=p.max_relation_tokens or d.max_relation_tokens,
        max_total_tokens=p.max_total_tokens or d.max_total_tokens,
        related_chunk_number=p.related_chunk_number or d.related_chunk_number,
        chunk_pick_method=_PICK_METHODS.get(p.kg_chunk_pick_method, d.kg_chunk_pick_method),
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
        rewrite=_REWRITES.get(p.rewrite, Rewrite(d.rewrite)),
        max_sub_queries=p.max_sub_queries or d.max_sub_queries,
    )


def history(p: query_pb2.QueryParams) -> tuple[ChatMessage, ...]:
    return tuple(ChatMessage(ROLES[m.role], m.content) for m in p.conversation_history)


def deadline_of(time_remaining: float | None) -> float | None:
    """The call's deadline on the time.monotonic() clock, from gRPC's time remaining."""
    return None if time_remaining is None else time.monotonic() + time_remaining


def to_filter(f: common_pb2.SearchFilter) -> SearchFilter:
    return SearchFilter(
        doc_ids=frozenset(f.doc_ids) or None,
        metadata=dict(f.metadata),
        time_from=f.time_from.ToNanoseconds() / 1e9 if f.HasField("time_from") else None,
        time_to=f.time_to.ToNanoseconds() / 1e9 if f.HasField("time_to") else None,
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
                aliases=e.aliases,
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
                char_start=c.provenance.start,
                char_end=c.provenance.end,
                first_page=c.provenance.first_page,
                last_page=c.provenance.last_page,
                section=c.provenance.section,
                title=c.title,
            )
            for c in retrieval.chunks
        ],
        keywords=query_pb2.Keywords(
            high_level=retrieval.keywords.high, low_level=retrieval.keywords.low
        ),
    )


def references_pb(references: Sequence[Reference]) -> list[query_pb2.Reference]:
    return [
        query_pb2.Reference(
            reference_id=r.reference_id,
            doc_id=r.doc_id,
            file_path=r.file_path,
            title=r.title,
            first_page=r.first_page,
            last_page=r.last_page,
            section=r.section,
            chunk_ids=r.chunk_ids,
        )
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


def publish_result_pb(
    change: DocumentChange, stored: DocumentRecord | None, outcome: Outcome
) -> ingest_pb2.PublishResult:
    return ingest_pb2.PublishResult(
        doc_id=change.doc_id,
        version=change.version,
        outcome=_OUTCOMES[outcome],
        stored_version=stored.version if stored is not None else 0,
    )
