"""Every rule a request must meet, in one table, checked before any handler runs.

The rules are data: `RULES` maps each request message type of the API (and each message
nested in one) to its fields, and each field to the checks its value must pass. `validate`
walks a request along its proto descriptor, so a nested message (QueryParams, SearchFilter,
ChatMessage, DocumentInput) is checked wherever it appears, and a violation is reported with
the field's path as the client wrote it (`params.conversation_history[2].role`). A unit test
holds the table to the proto: every field of every request message has an entry (an empty one
means "any value"), and no entry names a field the proto lacks.

Descriptions never quote the offending value: it may be a document's text or a secret pasted
into the wrong field, and the description travels back in the error and into logs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from ragstream.common.events import MAX_DOC_ID_CHARS
from ragstream.query.transport.checks import (
    Check,
    CrossCheck,
    Limits,
    Problem,
    content_size,
    count,
    each,
    finite,
    in_range,
    known,
    length,
    mapping,
    no_control_characters,
    no_format_characters,
    non_negative,
    not_blank,
    one_of,
    page_token,
    timestamp,
    unique_ids,
    visible,
    workspace,
    zero_or_range,
)
from ragstream.query.transport.convert import ROLES
from ragstream.query.transport.import_graph import IMPORT_CROSS_RULES, IMPORT_RULES
from ragstream.v1 import common_pb2, query_pb2

__all__ = ["RULES", "Limits", "Violation", "validate", "walks_into"]
Field = Any
"""A FieldDescriptor (the pure-Python or the upb one, whichever protobuf runs on)."""

MAX_QUERY_CHARS = 8000
MAX_TOP_K = 1000
MAX_RELATED_CHUNKS = 100
MAX_TOKEN_BUDGET = 1_000_000
MIN_TOTAL_TOKENS = 256
"""Below this the prompt's own instructions leave no room for context."""
MAX_HISTORY_MESSAGES = 100
MAX_MESSAGE_CHARS = 32_000
MAX_PROMPT_CHARS = 8000
MAX_RESPONSE_TYPE_CHARS = 100
MAX_KEYWORDS = 64
MAX_KEYWORD_CHARS = 200
MAX_IDS = 1000
"""Document ids in one filter, delete or status request."""
MAX_DOCUMENTS = 1000
"""Documents in one PublishDocuments call."""
MAX_METADATA_ENTRIES = 64
MAX_METADATA_KEY_CHARS = 128
MAX_METADATA_VALUE_CHARS = 1024
MAX_FILE_PATH_CHARS = 4096
MAX_PAGE_SIZE = 1000
MAX_NAME_CHARS = 1000
"""An entity name in a GraphService request."""
MAX_HITS = 100
MAX_NEIGHBOURHOOD_DEPTH = 2
MAX_NEIGHBOURHOOD_NODES = 500
MAX_TOP_ENTITIES = 100
MAX_VIOLATIONS = 20
"""A request with more problems reports the first ones; the rest would only add noise."""
LEAF_TYPES = frozenset({Timestamp.DESCRIPTOR.full_name})
"""Well-known types checked as a whole by their field's rule, never walked into."""


@dataclass(frozen=True, slots=True)
class Violation:
    field: str
    """Path of the field in the request, e.g. `documents[3].doc_id`."""
    description: str


def _publish_unique(request: Any) -> Iterator[Problem]:
    for suffix, description in unique_ids("documents")([d.doc_id for d in request.documents]):
        yield f"{suffix}.doc_id", f"{description}.doc_id"


def _one_output(params: Any) -> Iterator[Problem]:
    if params.only_need_context and params.only_need_prompt:
        yield "only_need_prompt", "cannot be combined with only_need_context"


def _time_order(search_filter: Any) -> Iterator[Problem]:
    both = search_filter.HasField("time_from") and search_filter.HasField("time_to")
    if both and search_filter.time_from.ToNanoseconds() >= search_filter.time_to.ToNanoseconds():
        yield "time_from", "must be before filter.time_to"


WORKSPACE = (workspace,)
DOC_ID = (length(1, MAX_DOC_ID_CHARS), no_control_characters, no_format_characters, visible)
METADATA = (
    mapping(
        MAX_METADATA_ENTRIES,
        keys=(length(1, MAX_METADATA_KEY_CHARS), no_control_characters),
        values=(length(0, MAX_METADATA_VALUE_CHARS),),
    ),
)
QUERY_REQUEST: dict[str, tuple[Check, ...]] = {
    "workspace": WORKSPACE,
    "query": (not_blank, length(0, MAX_QUERY_CHARS)),
    "params": (),
    "filter": (),
}
MAX_SUB_QUERIES = 8
MAX_COMMUNITY_LEVEL = 100
MAX_COMMUNITIES = 1000
NAME = (not_blank, length(0, MAX_NAME_CHARS))
KEYWORDS = (count(0, MAX_KEYWORDS), each(not_blank, length(0, MAX_KEYWORD_CHARS)))
BUDGET = (in_range(0, MAX_TOKEN_BUDGET),)

RULES: dict[str, dict[str, tuple[Check, ...]]] = {
    "ragstream.v1.QueryRequest": QUERY_REQUEST,
    "ragstream.v1.StreamQueryRequest": QUERY_REQUEST,
    "ragstream.v1.RetrieveRequest": QUERY_REQUEST,
    "ragstream.v1.QueryParams": {
        "mode": (known(query_pb2.QueryMode.DESCRIPTOR),),
        "top_k": (in_range(0, MAX_TOP_K),),
        "chunk_top_k": (in_range(0, MAX_TOP_K),),
        "max_entity_tokens": BUDGET,
        "max_relation_tokens": BUDGET,
        "max_total_tokens": (zero_or_range(MIN_TOTAL_TOKENS, MAX_TOKEN_BUDGET),),
        "related_chunk_number": (in_range(0, MAX_RELATED_CHUNKS),),
        "kg_chunk_pick_method": (known(query_pb2.ChunkPickMethod.DESCRIPTOR),),
        "cosine_threshold": (in_range(-1, 1),),
        "enable_rerank": (),
        "min_rerank_score": (finite,),
        "only_need_context": (),
        "only_need_prompt": (),
        "response_type": (length(0, MAX_RESPONSE_TYPE_CHARS), no_control_characters),
        "conversation_history": (count(0, MAX_HISTORY_MESSAGES),),
        "user_prompt": (length(0, MAX_PROMPT_CHARS),),
        "hl_keywords": KEYWORDS,
        "ll_keywords": KEYWORDS,
        "include_references": (),
        "rewrite": (known(query_pb2.QueryRewrite.DESCRIPTOR),),
        "max_sub_queries": (in_range(0, MAX_SUB_QUERIES),),
    },
    "ragstream.v1.ChatMessage": {
        "role": (one_of(ROLES),),
        "content": (length(0, MAX_MESSAGE_CHARS),),
    },
    "ragstream.v1.SearchFilter": {
        "doc_ids": (count(0, MAX_IDS), each(*DOC_ID)),
        "metadata": METADATA,
        "time_from": (timestamp,),
        "time_to": (timestamp,),
    },
    "ragstream.v1.PublishDocumentsRequest": {
        "workspace": WORKSPACE,
        "documents": (count(1, MAX_DOCUMENTS),),
    },
    "ragstream.v1.DocumentInput": {
        "doc_id": DOC_ID,
        "content": (content_size,),
        "file_path": (length(0, MAX_FILE_PATH_CHARS), no_control_characters),
        "metadata": METADATA,
        "version": (non_negative,),
        "timestamp": (timestamp,),
    },
    "ragstream.v1.DeleteDocumentsRequest": {
        "workspace": WORKSPACE,
        "doc_ids": (count(1, MAX_IDS), each(*DOC_ID)),
    },
    "ragstream.v1.GetDocumentStatusRequest": {
        "workspace": WORKSPACE,
        "doc_ids": (count(0, MAX_IDS), each(*DOC_ID)),
    },
    "ragstream.v1.ListDocumentsRequest": {
        "workspace": WORKSPACE,
        "state": (known(common_pb2.DocumentState.DESCRIPTOR),),
        "page_size": (in_range(0, MAX_PAGE_SIZE),),
        "page_token": (page_token,),
    },
    "ragstream.v1.GetIndexingProgressRequest": {"workspace": WORKSPACE},
    "ragstream.v1.SearchEntitiesRequest": {
        "workspace": WORKSPACE,
        "query": QUERY_REQUEST["query"],
        "limit": (in_range(0, MAX_HITS),),
    },
    "ragstream.v1.GetEntityRequest": {
        "workspace": WORKSPACE,
        "name": NAME,
        "include_chunks": (),
    },
    "ragstream.v1.GetRelationRequest": {
        "workspace": WORKSPACE,
        "source": NAME,
        "target": NAME,
        "include_chunks": (),
    },
    "ragstream.v1.GetNeighbourhoodRequest": {
        "workspace": WORKSPACE,
        "name": NAME,
        "depth": (in_range(0, MAX_NEIGHBOURHOOD_DEPTH),),
        "max_nodes": (in_range(0, MAX_NEIGHBOURHOOD_NODES),),
    },
    "ragstream.v1.ListCommunitiesRequest": {
        "workspace": WORKSPACE,
        "level": (in_range(0, MAX_COMMUNITY_LEVEL),),
        "limit": (in_range(0, MAX_COMMUNITIES),),
    },
    "ragstream.v1.GetCommunityRequest": {"workspace": WORKSPACE, "community_id": NAME},
    "ragstream.v1.GetEntityCommunitiesRequest": {"workspace": WORKSPACE, "name": NAME},
    "ragstream.v1.GetGraphStatsRequest": {
        "workspace": WORKSPACE,
        "top": (in_range(0, MAX_TOP_ENTITIES),),
    },
    **IMPORT_RULES,
}
CROSS_RULES: dict[str, tuple[CrossCheck, ...]] = {
    "ragstream.v1.QueryParams": (_one_output,),
    "ragstream.v1.SearchFilter": (_time_order,),
    "ragstream.v1.PublishDocumentsRequest": (_publish_unique,),
    "ragstream.v1.DeleteDocumentsRequest": (
        lambda request: unique_ids("doc_ids")(request.doc_ids),
    ),
    **IMPORT_CROSS_RULES,
}


def validate(request: Message, limits: Limits) -> list[Violation]:
    """Every rule `request` breaks (at most MAX_VIOLATIONS); empty when it is valid.

    Raises KeyError for a message type without rules: a new RPC must get its rules before
    it can be served (fail closed), and the coverage test says which are missing.
    """
    return list(islice(_walk(request, "", limits), MAX_VIOLATIONS))


def _walk(message: Message, prefix: str, limits: Limits) -> Iterator[Violation]:
    descriptor = message.DESCRIPTOR
    rules = RULES[descriptor.full_name]
    for field in descriptor.fields:
        path = prefix + field.name
        value = getattr(message, field.name)
        broken = False
        for check in rules[field.name]:
            for suffix, description in check(value, limits):
                broken = True
                yield Violation(path + suffix, description)
        if not broken and walks_into(field):
            yield from _nested(message, field, value, path, limits)
    for cross in CROSS_RULES.get(descriptor.full_name, ()):
        for field_path, description in cross(message):
            yield Violation(prefix + field_path, description)


def _nested(
    message: Message, field: Field, value: Any, path: str, limits: Limits
) -> Iterator[Violation]:
    if field.is_repeated:
        for index, item in enumerate(value):
            yield from _walk(item, f"{path}[{index}].", limits)
    elif message.HasField(field.name):
        yield from _walk(value, f"{path}.", limits)


def walks_into(field: Field) -> bool:
    """Whether `field` holds messages with rules of their own (not maps, not leaf types)."""
    if field.message_type is None:
        return False
    return not (
        field.message_type.GetOptions().map_entry or field.message_type.full_name in LEAF_TYPES
    )
