"""Stage 2's records: what a merged entity or relation writes to the search and graph stores.

Pure functions of the draft and its description, so a batch builds them all before one
write per store, and `ragstream reindex` embeds exactly the texts the indexer embedded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ragstream.common.derive import Draft
from ragstream.common.models import Collection, GraphEdge, GraphNode, SearchRecord
from ragstream.common.text.analyzer import analyze

NO_VECTOR = np.zeros(0, dtype=np.float32)
"""The vector of a record not embedded yet."""


def relation_embedding_text(keywords: str, source: str, target: str, description: str) -> str:
    """What a relation's vector is made from (LightRAG's recipe): keywords, both endpoints,
    then the description."""
    return f"{keywords}\t{source}\n{target}\n{description}"


def embedding_text(collection: Collection, record: SearchRecord) -> str:
    """The text the indexer embedded for a stored record: a chunk's and an entity's is the
    record text; a relation's is keywords, endpoints and description."""
    if collection is not Collection.RELATIONS:
        return record.text
    attrs = record.attrs
    return relation_embedding_text(
        str(attrs.get("keywords", "")),
        str(attrs.get("source", "")),
        str(attrs.get("target", "")),
        str(attrs.get("description", record.text)),
    )


@dataclass(frozen=True, slots=True)
class Merged:
    """One merged key, ready to write once its vector is known."""

    collection: Collection
    record: SearchRecord
    """The search record, with NO_VECTOR until embedded."""
    embedded: str
    """The text its vector is made from."""
    node: GraphNode | None = None
    edge: GraphEdge | None = None


@dataclass(frozen=True, slots=True)
class Aliases:
    """What entity resolution merged into a key (empty for a key merged alone)."""

    members: tuple[str, ...] = ()
    """Entity: the member entity keys; relation: the raw relation keys."""
    names: tuple[str, ...] = ()
    """Entity: every name its members are written with, sorted."""


ALONE = Aliases()


def merged(workspace: str, draft: Draft, description: str, group: Aliases = ALONE) -> Merged:
    """The records of a merged entity (a draft with a name) or relation."""
    return (
        _relation(workspace, draft, description, group)
        if draft.source
        else _entity(workspace, draft, description, group)
    )


def _entity(ws: str, draft: Draft, description: str, group: Aliases) -> Merged:
    text = f"{draft.name}\n{description}"
    aliases = [a for a in group.names if a != draft.name]
    # Aliases are BM25 terms (a search by any alias finds the entity); the embedded text
    # stays name and description, so an entity merged alone embeds what it did before.
    record = SearchRecord(
        id=draft.key,
        workspace=ws,
        text=text,
        terms=tuple(analyze(" ".join([*aliases, text]))),
        vector=NO_VECTOR,
        doc_ids=draft.doc_ids,
        attrs={
            "name": draft.name,
            "type": draft.type,
            "description": description,
            "source_ids": list(draft.chunk_ids),
            "file_paths": list(draft.file_paths),
            **_grouped(group, aliases),
        },
    )
    node = GraphNode(draft.key, draft.name, draft.type, description, draft.chunk_ids, draft.doc_ids)
    return Merged(Collection.ENTITIES, record, text, node=node)


def _grouped(group: Aliases, aliases: list[str]) -> dict[str, object]:
    """The attributes entity resolution adds: only on a key it merged others into."""
    grouped: dict[str, object] = {"members": list(group.members)} if group.members else {}
    if aliases:
        grouped["aliases"] = aliases
    return grouped


def _relation(ws: str, draft: Draft, description: str, group: Aliases) -> Merged:
    embedded = relation_embedding_text(draft.keywords, draft.source, draft.target, description)
    record = SearchRecord(
        id=draft.key,
        workspace=ws,
        text=description,
        terms=tuple(analyze(f"{draft.keywords} {draft.source} {draft.target} {description}")),
        vector=NO_VECTOR,
        doc_ids=draft.doc_ids,
        attrs={
            "source": draft.source,
            "target": draft.target,
            "keywords": draft.keywords,
            "description": description,
            "weight": draft.weight,
            "source_ids": list(draft.chunk_ids),
            "file_paths": list(draft.file_paths),
            **_grouped(group, []),
        },
    )
    edge = GraphEdge(
        draft.source, draft.target, draft.keywords, description, draft.weight,
        draft.chunk_ids, draft.doc_ids,
    )  # fmt: skip
    return Merged(Collection.RELATIONS, record, embedded, edge=edge)
