"""`ragstream import-graph FILE`: curated entities and relations into the index.

The file is JSON Lines (common/graph_records.py), each record naming its `source_id`. It
is read and checked whole before anything is sent, so a mistake on line 1,900 sends
nothing; then each source is one ImportGraph call, which replaces what an earlier import
of that source held. `ragstream delete SOURCE_ID` removes a source's records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import grpc
from rich.markup import escape

from ragstream.cli.client import Client
from ragstream.cli.report import err, print_rpc_failure, waiting
from ragstream.common.graph_records import CuratedEntity, RecordError, parse_line
from ragstream.v1 import ingest_pb2


class GraphFileError(Exception):
    """The file cannot be imported; the message says where and why, in one line."""


@dataclass
class Source:
    entities: list[ingest_pb2.CuratedEntity] = field(default_factory=list)
    relations: list[ingest_pb2.CuratedRelation] = field(default_factory=list)


def read_graph_file(path: Path) -> dict[str, Source]:
    """The file's records by source id, in the order the sources first appear."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise GraphFileError(f"{path}: cannot read it as UTF-8 text ({exc})") from None
    sources: dict[str, Source] = {}
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            source_id, record = parse_line(text, number, with_source=True)
        except RecordError as exc:
            raise GraphFileError(f"{path}:{exc.line}: {exc.field} {exc.problem}") from None
        source = sources.setdefault(source_id, Source())
        if isinstance(record, CuratedEntity):
            entity = ingest_pb2.CuratedEntity(
                name=record.name, type=record.type, description=record.description
            )
            source.entities.append(entity)
        else:
            relation = ingest_pb2.CuratedRelation(
                source=record.source,
                target=record.target,
                description=record.description,
                keywords=record.keywords,
                weight=record.weight,
            )
            source.relations.append(relation)
    if not sources:
        raise GraphFileError(f"{path}: holds no records")
    return sources


async def import_graph(
    server: str, workspace: str, path: Path, wait: bool, timeout_s: float
) -> int:
    try:
        sources = read_graph_file(path)
    except GraphFileError as exc:
        err.print(f"[red]error[/red]: {escape(str(exc))}")
        return 2
    try:
        async with Client(server) as client:
            results = []
            for source_id, source in sources.items():
                request = ingest_pb2.ImportGraphRequest(
                    workspace=workspace,
                    source_id=source_id,
                    entities=source.entities,
                    relations=source.relations,
                )
                results.append((await client.ingest.ImportGraph(request)).result)
            entities = sum(len(s.entities) for s in sources.values())
            relations = sum(len(s.relations) for s in sources.values())
            print(
                f"imported {entities} entities and {relations} relations from "
                f"{len(sources)} sources into workspace '{workspace}'"
            )
            if wait:
                with waiting() as report:
                    await client.wait_until_indexed(workspace, results, timeout_s, report=report)
                print("indexed")
    except grpc.aio.AioRpcError as exc:
        return print_rpc_failure(exc, server)
    except TimeoutError as exc:
        err.print(f"[red]error[/red]: {escape(str(exc))}")
        return 1
    return 0
