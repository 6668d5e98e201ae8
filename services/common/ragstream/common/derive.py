"""Derive an entity or a relation from all of its mentions (pure functions).

Stage 2 uses it to write entities and relations; the query service uses it to rebuild
descriptions from the allowed documents' mentions when a query is filtered.

Merging is a function of the ledger alone, never of the previous merge result, so the
outcome does not depend on the order in which documents arrived or were deleted, and a
deleted document's text cannot linger in a description (LightRAG #1555).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragstream.common.models import Mention
from ragstream.common.text.tokens import count_tokens

MAX_SOURCE_IDS = 300
"""Chunk ids kept per entity or relation (LightRAG's cap)."""
FRAGMENT_SEPARATOR = "\n"


@dataclass(frozen=True, slots=True)
class Draft:
    """A merged entity or relation before its description is (maybe) summarized."""

    key: str
    name: str
    """Entity display name; for relations, empty."""
    type: str
    source: str
    target: str
    keywords: str
    weight: float
    fragments: tuple[str, ...]
    """Distinct descriptions, in chunk order."""
    chunk_ids: tuple[str, ...]
    doc_ids: tuple[str, ...]
    file_paths: tuple[str, ...]


FALLBACK_TYPES = ("unknown", "concept")
"""Types an extractor gives when it has no evidence; any evidenced type outvotes them."""


def _vote(values: Sequence[str], ignore: Sequence[str] = ()) -> str:
    """The most common value not in `ignore`; ties go to the one seen first. When only
    ignored values occur, the vote is among them."""
    counts = Counter(v for v in values if v and v not in ignore)
    if not counts:
        return _vote(values) if ignore else ""
    best = max(counts.values())
    return next(v for v in values if counts.get(v) == best)


def _unique(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def merge(key: str, mentions: Sequence[Mention]) -> Draft:
    """One entity or relation from its mentions (all of the same key)."""
    ordered = sorted(mentions, key=lambda m: m.chunk_id)
    keywords = _unique(
        [k.strip() for m in ordered for k in m.keywords.replace("，", ",").split(",")]
    )
    return Draft(
        key=key,
        name=_vote([m.name for m in ordered]),
        type=_vote([m.type for m in ordered], ignore=FALLBACK_TYPES) or "unknown",
        source=ordered[0].source,
        target=ordered[0].target,
        keywords=", ".join(keywords),
        weight=sum(m.weight for m in ordered),
        fragments=_unique([m.description for m in ordered]),
        chunk_ids=_unique([m.chunk_id for m in ordered])[:MAX_SOURCE_IDS],
        doc_ids=tuple(sorted({m.doc_id for m in ordered})),
        file_paths=_unique([m.file_path for m in ordered]),
    )


def needs_summary(fragments: Sequence[str], max_fragments: int, max_tokens: int) -> bool:
    """LightRAG's rule: summarize past 8 fragments or 1,200 tokens (by default)."""
    if len(fragments) > max_fragments:
        return True
    text = FRAGMENT_SEPARATOR.join(fragments)
    # A token is at least one byte, so a text of at most max_tokens bytes needs no count.
    return len(text.encode()) > max_tokens and count_tokens(text) > max_tokens


def joined(fragments: Sequence[str]) -> str:
    return FRAGMENT_SEPARATOR.join(fragments)


def truncated(fragments: Sequence[str], max_tokens: int) -> str:
    """The offline summary: the fragments in order, as many as fit in max_tokens."""
    kept: list[str] = []
    used = 0
    for fragment in fragments:
        tokens = count_tokens(fragment)
        if kept and used + tokens > max_tokens:
            break
        kept.append(fragment)
        used += tokens
    return joined(kept)
