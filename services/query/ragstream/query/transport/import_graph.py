"""ImportGraph's request: its rules (gathered into `validation`'s) and the document change
it publishes, a graph source whose content is its records (common/graph_records.py).

The limits are the records format's own, so everything the gate lets through parses again
in the indexer, and a source either imports whole or is refused before it is published.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from ragstream.common.events import MAX_DOC_ID_CHARS, DocumentChange
from ragstream.common.graph_records import (
    MAX_NAME_CHARS,
    MAX_TEXT_CHARS,
    CuratedEntity,
    CuratedRelation,
    Record,
    to_line,
)
from ragstream.common.models import entity_key
from ragstream.query.transport.checks import (
    Check,
    CrossCheck,
    Problem,
    count,
    finite,
    length,
    no_control_characters,
    no_format_characters,
    not_blank,
    visible,
    workspace,
)
from ragstream.v1 import ingest_pb2

MAX_GRAPH_RECORDS = 20_000
"""Entities, and relations, in one request (each record is a chunk to embed)."""
NAME = (not_blank, length(0, MAX_NAME_CHARS))
TEXT = (length(0, MAX_TEXT_CHARS),)


def _positive(value: float, limits: Any) -> Iterator[Problem]:
    if value < 0:
        yield "", "must not be negative (0 means 1)"


def _some_records(request: Any) -> Iterator[Problem]:
    if not request.entities and not request.relations:
        yield "entities", "and relations must not both be empty"


def _distinct_ends(request: Any) -> Iterator[Problem]:
    for index, relation in enumerate(request.relations):
        if entity_key(relation.source) == entity_key(relation.target):
            yield f"relations[{index}].target", "names the same entity as source"


IMPORT_RULES: dict[str, dict[str, tuple[Check, ...]]] = {
    "ragstream.v1.ImportGraphRequest": {
        "workspace": (workspace,),
        "source_id": (
            length(1, MAX_DOC_ID_CHARS),
            no_control_characters,
            no_format_characters,
            visible,
        ),
        "entities": (count(0, MAX_GRAPH_RECORDS),),
        "relations": (count(0, MAX_GRAPH_RECORDS),),
    },
    "ragstream.v1.CuratedEntity": {
        "name": NAME,
        "type": (length(0, 64),),
        "description": TEXT,
    },
    "ragstream.v1.CuratedRelation": {
        "source": NAME,
        "target": NAME,
        "description": TEXT,
        "keywords": (length(0, 1000),),
        "weight": (finite, _positive),
    },
}
IMPORT_CROSS_RULES: dict[str, tuple[CrossCheck, ...]] = {
    "ragstream.v1.ImportGraphRequest": (_some_records, _distinct_ends),
}


def graph_change(request: ingest_pb2.ImportGraphRequest, workspace: str) -> DocumentChange:
    """The source's upsert: one line per record, entities first, in the request's order."""
    records: list[Record] = [CuratedEntity(e.name, e.type, e.description) for e in request.entities]
    records += [
        CuratedRelation(r.source, r.target, r.description, r.keywords, r.weight or 1.0)
        for r in request.relations
    ]
    return DocumentChange(
        workspace=workspace,
        doc_id=request.source_id,
        version=time.time_ns(),
        deleted=False,
        content="\n".join(to_line(record) for record in records),
        file_path=request.source_id,
        timestamp=time.time(),
        graph=True,
    )
