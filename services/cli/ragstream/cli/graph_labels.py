"""The hand labels `ragstream eval graph` scores the offline graph against (eval_data/).

`demo_entities.json` lists every named thing of the demo corpus with its gold type and all
its names: the names of one thing form a gold same-as group. `multihop_names.json` holds
200 passage titles of two multi-hop sets, each with its gold type; only the passage id is
stored, the passage is read from the set's folder (`passages`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragstream.common.events import DocumentChange

LABELS = Path(__file__).parent / "eval_data"
DEMO_LABELS = LABELS / "demo_entities.json"
MULTIHOP_LABELS = LABELS / "multihop_names.json"


class LabelError(ValueError):
    """A label file or a multi-hop set is missing or malformed; the message names it."""


@dataclass(frozen=True, slots=True)
class Thing:
    """One real thing: its gold type and every name the corpus gives it."""

    type: str
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MultihopLabels:
    """Per set folder name, the labelled passage ids; and the things they name."""

    docs: Mapping[str, frozenset[str]]
    things: tuple[Thing, ...]


def demo_things(path: Path = DEMO_LABELS) -> tuple[Thing, ...]:
    data = _read(path)
    try:
        return tuple(Thing(str(t["type"]), tuple(map(str, t["names"]))) for t in data["things"])
    except (KeyError, TypeError) as exc:
        raise LabelError(f"{path}: every thing needs a type and names ({exc})") from None


def multihop_labels(path: Path = MULTIHOP_LABELS) -> MultihopLabels:
    data = _read(path)
    try:
        rows = {name: list(labels) for name, labels in data["sets"].items()}
        docs = {name: frozenset(str(r["doc"]) for r in labels) for name, labels in rows.items()}
        things = tuple(
            Thing(str(r["type"]), (str(r["name"]),)) for labels in rows.values() for r in labels
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise LabelError(f"{path}: every set needs rows of doc, name and type ({exc})") from None
    return MultihopLabels(docs, things)


def passages(data_dir: Path, docs: Mapping[str, frozenset[str]]) -> Iterator[DocumentChange]:
    """The labelled passages, read from `data_dir`/<set>/corpus.jsonl as `eval multihop`
    indexes them (workspace multihop)."""
    from ragstream.cli.multihop import passages as all_passages  # the query engine's imports

    for name, wanted in docs.items():
        corpus = data_dir / name / "corpus.jsonl"
        if not corpus.is_file():
            raise LabelError(f"--data {data_dir}: {name}/corpus.jsonl not found")
        found = [change for change in all_passages(corpus) if change.doc_id in wanted]
        if len(found) != len(wanted):
            missing = len(wanted) - len(found)
            raise LabelError(f"--data {data_dir}: {name} lacks {missing} labelled passages")
        yield from found


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise LabelError(f"cannot read labels {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise LabelError(f"labels {path} are not valid JSON: {exc}") from None


def names_of(things: Sequence[Thing]) -> list[str]:
    return [name for thing in things for name in thing.names]
