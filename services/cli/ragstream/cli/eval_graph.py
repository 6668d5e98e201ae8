"""`ragstream eval graph`: the offline graph's entity types and same-as groups, scored
against hand labels (graph_labels, graph_score).

The demo corpus, and with `--data` the 200 labelled multi-hop passages, go through the whole
indexing pipeline on the embedded backends with no LLM (the NLP extractor), each sample in
a workspace of its own under a temporary directory; the entities are then read back from
the graph store through the mentions of every indexed chunk.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ragstream.cli.files import read_all
from ragstream.cli.graph_labels import Thing, demo_things, multihop_labels, passages
from ragstream.cli.graph_score import TYPED, GraphScore, StoreEntity, score
from ragstream.cli.local_index import publish, running_indexer, wait_current
from ragstream.common.config import Settings
from ragstream.common.events import DocumentChange
from ragstream.common.models import Collection
from ragstream.common.registry import Backends

DEMO_CORPUS = Path(__file__).parent / "demo_data" / "corpus"
LIST_PAGE = 500
out = Console(stderr=True)


@dataclass(frozen=True, slots=True)
class Sample:
    name: str
    things: tuple[Thing, ...]
    documents: tuple[DocumentChange, ...]


def demo_sample(corpus: Path = DEMO_CORPUS) -> Sample:
    documents, _ = read_all([corpus])
    changes = tuple(
        DocumentChange("demo", d.doc_id, d.version, False, d.content, str(d.path))
        for d in documents
    )
    return Sample("demo", demo_things(), changes)


def multihop_sample(data_dir: Path) -> Sample:
    labels = multihop_labels()
    return Sample("multihop", labels.things, tuple(passages(data_dir, labels.docs)))


async def run_graph_eval(settings: Settings, samples: Iterable[Sample], as_json: bool) -> None:
    samples = list(samples)
    with tempfile.TemporaryDirectory(prefix="ragstream-eval-graph-") as scratch:
        # Offline and embedded whatever the configuration says: the labels score the NLP
        # extractor, and the scratch directory must hold the whole index.
        offline = settings.model_copy(
            update={
                "data_dir": Path(scratch),
                "llm": type(settings.llm)(),
                "storage": type(settings.storage)(),
                "bus": type(settings.bus)(),
            }
        )
        async with running_indexer(offline) as backends:
            for sample in samples:
                await publish(backends, sample.documents)
            out.print(f"indexing {sum(len(s.documents) for s in samples)} documents ...")
            await wait_current(offline, backends)
            scores = {s.name: score(s.things, await entities(backends, s.name)) for s in samples}
    report = {name: summary(result) for name, result in scores.items()}
    if as_json:
        print(json.dumps(report))
        return
    for name, lines in report.items():
        print(f"[{name}]")
        for key, value in lines.items():
            print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")


async def entities(backends: Backends, workspace: str) -> list[StoreEntity]:
    """Every entity the workspace's chunks mention, with its aliases where the store keeps
    them (an entity resolved from several names)."""
    stores, after = backends.stores, ""
    chunks: list[str] = []
    while page := await stores.docs.list(workspace, None, LIST_PAGE, after):
        chunks.extend(c for record in page for c in record.chunk_ids)
        after = page[-1].doc_id
    keys = sorted(await stores.mentions.keys_of_chunks(workspace, chunks))
    nodes = await stores.graph.get_nodes(workspace, keys)
    # A resolved entity keeps its other names in its search record (merge_records.py).
    records = await stores.search.get(Collection.ENTITIES, workspace, [n.key for n in nodes])
    aliases = {r.id: tuple(str(a) for a in r.attrs.get("aliases", ())) for r in records}
    return [StoreEntity(n.key, n.name, n.type, aliases.get(n.key, ())) for n in nodes]


def summary(result: GraphScore) -> dict[str, float | int | str]:
    lines: dict[str, float | int | str] = {
        "gold_names": result.names,
        "found": result.found,
        "type_accuracy": result.type_accuracy,
        "typed_names": result.typed,
    }
    for kind in TYPED:
        right, seen = result.per_type.get(kind, (0, 0))
        lines[f"accuracy_{kind}"] = f"{right}/{seen}"
    lines |= {
        "gold_pairs": result.gold_pairs,
        "gold_pairs_found": result.pairs_found,
        "duplicate_pairs_left": result.duplicate_pairs,
        "duplicate_share": result.duplicate_share,
        "pairs_left": "; ".join(f"{a} / {b}" for a, b in result.pairs_left),
        "merges": result.merges,
        "wrong_merges": result.wrong_merges,
        "wrong_merge_share": result.wrong_merge_share,
        "top_confusions": ", ".join(
            f"{gold}->{got} {n}" for (gold, got), n in result.confusions.most_common(5)
        ),
    }
    return lines
