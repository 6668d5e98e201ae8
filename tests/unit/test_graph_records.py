"""The curated graph records format: what parses, and that every refusal names the line
and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragstream.cli.import_graph import GraphFileError, read_graph_file
from ragstream.common.graph_records import (
    CuratedEntity,
    CuratedRelation,
    RecordError,
    parse_content,
    parse_line,
    to_line,
)

ENTITY = {"kind": "entity", "source_id": "crm", "name": "Kestrel Polymers", "type": "org"}
RELATION = {"kind": "relation", "source_id": "crm", "source": "Kestrel", "target": "Tern S3"}


def test_records_parse_and_survive_the_event_content() -> None:
    source, entity = parse_line(json.dumps(ENTITY), 1, with_source=True)
    _, relation = parse_line(json.dumps({**RELATION, "weight": 2}), 2, with_source=True)
    assert (source, entity) == ("crm", CuratedEntity("Kestrel Polymers", "org"))
    assert relation == CuratedRelation("Kestrel", "Tern S3", weight=2.0)
    assert parse_content("\n".join([to_line(entity), "", to_line(relation)])) == [entity, relation]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        ("not json", "(line)"),
        ("[1]", "(line)"),
        (json.dumps({**ENTITY, "kind": "thing"}), "kind"),
        (json.dumps({k: v for k, v in ENTITY.items() if k != "source_id"}), "source_id"),
        (json.dumps({**ENTITY, "source_id": " "}), "source_id"),
        (json.dumps({k: v for k, v in ENTITY.items() if k != "name"}), "name"),
        (json.dumps({**ENTITY, "name": "  "}), "name"),
        (json.dumps({**ENTITY, "name": 7}), "name"),
        (json.dumps({**ENTITY, "colour": "red"}), "colour"),
        (json.dumps({**ENTITY, "source": "x"}), "source"),
        (json.dumps({**RELATION, "target": "KESTREL "}), "target"),
        (json.dumps({**RELATION, "weight": "heavy"}), "weight"),
        (json.dumps({**RELATION, "weight": -1}), "weight"),
        (json.dumps({**ENTITY, "description": "x" * 9000}), "description"),
    ],
)
def test_a_bad_record_names_its_line_and_field(line: str, field: str) -> None:
    with pytest.raises(RecordError) as refused:
        parse_line(line, 7, with_source=True)
    assert (refused.value.line, refused.value.field) == (7, field)


def test_a_file_is_grouped_by_source_or_refused_whole(tmp_path: Path) -> None:
    path = tmp_path / "graph.jsonl"
    other = {**ENTITY, "source_id": "wiki", "name": "Tern S3"}
    path.write_text("\n".join(json.dumps(r) for r in (ENTITY, RELATION, other)) + "\n\n")
    sources = read_graph_file(path)
    assert list(sources) == ["crm", "wiki"]
    assert (len(sources["crm"].entities), len(sources["crm"].relations)) == (1, 1)
    path.write_text(json.dumps(ENTITY) + "\n" + json.dumps({**RELATION, "weight": 0}) + "\n")
    with pytest.raises(GraphFileError, match=r"graph.jsonl:2: weight must be"):
        read_graph_file(path)
    path.write_text("\n")
    with pytest.raises(GraphFileError, match="holds no records"):
        read_graph_file(path)
