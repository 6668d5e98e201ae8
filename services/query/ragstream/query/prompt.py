"""The LLM prompt: the system prompt with the context and its numbered references, the
conversation history, then the question. The budget stage counts it; the engine sends it."""

from __future__ import annotations

from collections.abc import Sequence

from ragstream.common.providers.llm import ChatMessage
from ragstream.query.citations import reference_label
from ragstream.query.types import (
    ContextEntity,
    ContextRelation,
    QueryOptions,
    Reference,
    Retrieval,
)

SYSTEM_PROMPT = """You are ragstream's answering assistant. Answer the user's question using only \
the context below, which was retrieved from the user's documents.

Rules:
- Use only facts stated in the context; if it does not contain the answer, say so plainly.
- Cite the sources you use as [n], where n is a reference number from the reference list: \
put the marker right after each sentence it supports, and cite only references you used.
- Answer in the language of the question.
- Format: {response_type}.
{user_prompt}
---Context: entities (knowledge graph)---
{entities}

---Context: relations (knowledge graph)---
{relations}

---Context: document chunks---
{chunks}

---References---
{references}
"""


def entity_line(e: ContextEntity) -> str:
    known = f"; also named {', '.join(e.aliases)}" if e.aliases else ""
    return f"- {e.name} ({e.type or 'unknown'}{known}): {e.description}"


def relation_line(r: ContextRelation) -> str:
    return f"- {r.source} <-> {r.target} [{r.keywords}]: {r.description}"


def build_messages(
    query: str,
    retrieval: Retrieval,
    options: QueryOptions,
) -> list[ChatMessage]:
    """System prompt with the context, then the conversation history, then the question."""
    system = system_message(retrieval, options.response_type, options.user_prompt)
    return [system, *conversation(query, options)]


def conversation(query: str, options: QueryOptions) -> list[ChatMessage]:
    """The messages after the system prompt: the history, then the question."""
    return [*options.history, ChatMessage("user", query)]


def system_message(retrieval: Retrieval, response_type: str, user_prompt: str) -> ChatMessage:
    """The instructions with the context, each placeholder a line of its own."""
    chunk_text = "\n\n".join(f"[{c.reference_id}] {c.content}" for c in retrieval.chunks)
    extra = f"- {user_prompt}\n" if user_prompt else ""
    system = SYSTEM_PROMPT.format(
        response_type=response_type,
        user_prompt=extra,
        entities="\n".join(entity_line(e) for e in retrieval.entities) or "(none)",
        relations="\n".join(relation_line(r) for r in retrieval.relations) or "(none)",
        chunks=chunk_text or "(no matching chunks)",
        references="\n".join(reference_line(r) for r in retrieval.references) or "(none)",
    )
    return ChatMessage("system", system)


def reference_line(r: Reference) -> str:
    return f"[{r.reference_id}] {reference_label(r)}"


def render_prompt(messages: Sequence[ChatMessage]) -> str:
    return "\n\n".join(f"<{m.role}>\n{m.content}" for m in messages)
