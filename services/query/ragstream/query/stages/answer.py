"""Answer stage: the LLM prompt with numbered references, or an extractive answer offline.

The extractive answerer is the offline default (no LLM configured): it quotes the context
sentences that share the most query terms, each with its reference, and says that it is
extractive. It never pretends to be a model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragstream.common.providers.llm import ChatMessage
from ragstream.common.text.analyzer import analyze
from ragstream.query.types import (
    ContextChunk,
    ContextEntity,
    ContextRelation,
    QueryOptions,
    Retrieval,
)

EXTRACTIVE_HEADER = "Extractive answer (no LLM configured), quoted from the best-matching sources:"
NO_CONTEXT_ANSWER = "I could not find anything in the indexed documents about this question."
BYPASS_WITHOUT_LLM_ANSWER = (
    "Bypass mode sends the question straight to the LLM, without searching the documents, "
    "and no LLM is configured: there is nothing to answer it. Configure an LLM, or ask in "
    "another mode (naive, local, global, hybrid or mix) for an extractive answer quoted from "
    "the documents."
)
REFERRING_PRONOUNS = frozenset({"It", "Its", "He", "His", "She", "Her", "They", "Their", "This"})
_SENTENCE_END = re.compile(r"(?<=[.!?。！？；])\s+|(?<=[。！？；])|\n{2,}")

SYSTEM_PROMPT = """You are ragstream's answering assistant. Answer the user's question using only \
the context below, which was retrieved from the user's documents.

Rules:
- Use only facts stated in the context; if it does not contain the answer, say so plainly.
- Cite the sources you use as [n], where n is a reference number from the reference list.
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


def empty_workspace_answer(workspace: str) -> str:
    return (
        f"The workspace '{workspace}' holds no indexed documents, so there is nothing to answer "
        "from. Ingest documents into it and wait until they are indexed, or check the "
        "workspace's name."
    )


def entity_line(e: ContextEntity) -> str:
    return f"- {e.name} ({e.type or 'unknown'}): {e.description}"


def relation_line(r: ContextRelation) -> str:
    return f"- {r.source} <-> {r.target} [{r.keywords}]: {r.description}"


def build_messages(
    query: str,
    retrieval: Retrieval,
    options: QueryOptions,
) -> list[ChatMessage]:
    """System prompt with the context, then the conversation history, then the question."""
    chunks, references = retrieval.chunks, retrieval.references
    chunk_text = "\n\n".join(f"[{c.reference_id}] {c.content}" for c in chunks)
    reference_text = "\n".join(f"[{r.reference_id}] {r.file_path or r.doc_id}" for r in references)
    extra = f"- {options.user_prompt}\n" if options.user_prompt else ""
    system = SYSTEM_PROMPT.format(
        response_type=options.response_type,
        user_prompt=extra,
        entities="\n".join(entity_line(e) for e in retrieval.entities) or "(none)",
        relations="\n".join(relation_line(r) for r in retrieval.relations) or "(none)",
        chunks=chunk_text or "(no matching chunks)",
        references=reference_text or "(none)",
    )
    return [ChatMessage("system", system), *options.history, ChatMessage("user", query)]


def render_prompt(messages: Sequence[ChatMessage]) -> str:
    return "\n\n".join(f"<{m.role}>\n{m.content}" for m in messages)


def split_sentences(text: str) -> list[str]:
    """Sentences with white space folded; markdown headings and emphasis marks dropped."""
    sentences = []
    for raw in _SENTENCE_END.split(text):
        sentence = " ".join(raw.replace("**", "").split()).lstrip("#").strip()
        if sentence and not raw.lstrip().startswith("#"):
            sentences.append(sentence)
    return sentences


def extractive_answer(query: str, chunks: Sequence[ContextChunk], max_sentences: int = 3) -> str:
    """The context sentences sharing the most distinct query terms, best first, cited.

    A sentence that opens with a pronoun ("It has supplied O-rings ...") is quoted with the
    sentence before it, which names what the pronoun stands for.
    """
    wanted = set(analyze(query))
    scored: list[tuple[float, int, int, str, str]] = []
    for rank, chunk in enumerate(chunks):
        sentences = split_sentences(chunk.content)
        for index, sentence in enumerate(sentences):
            overlap = len(wanted.intersection(analyze(sentence)))
            if overlap:
                quoted = sentence
                if index and sentence.split(" ", 1)[0] in REFERRING_PRONOUNS:
                    quoted = f"{sentences[index - 1]} {sentence}"
                # Rank breaks ties: a sentence from a better chunk wins, then an earlier one.
                scored.append((overlap, -rank, -index, quoted, chunk.reference_id))
    if not scored:
        return NO_CONTEXT_ANSWER
    scored.sort(reverse=True)
    lines = [f"- {sentence} [{ref}]" for *_, sentence, ref in scored[:max_sentences]]
    return "\n".join([EXTRACTIVE_HEADER, *lines])
