"""`ragstream eval compare`: one evaluation set under several named configurations.

Each configuration is a TOML file (its name is the file's stem). Every configuration runs
the set as `eval beir` or `eval multihop` would, on the embedded backends, and one table
shows nDCG@10, recall@k and the mean query latency of each, with the difference against the
first. Indices are kept under `--index-root`, in a directory keyed by a hash of the set and
of the settings that decide what an index holds (`eval_index.py`), so configurations that
differ only in query settings share one index, and a later comparison reuses it.

The `--json` output is one object, stable across versions within its `schema` (README,
"Comparing configurations").
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragstream.cli.beir import BeirData, Ranked, evaluate_beir, scores
from ragstream.cli.eval_index import SetKind, index_key
from ragstream.cli.multihop import evaluate_multihop
from ragstream.common.config import Settings
from ragstream.query.search import Retriever
from ragstream.query.types import Mode

SCHEMA = "ragstream.eval.compare/1"
MODES = ["local", "global", "hybrid", "mix", "naive"]


@dataclass(frozen=True, slots=True)
class Configuration:
    name: str
    path: Path
    settings: Settings


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    path: Path
    index_key: str
    ranked: Ranked
    metrics: dict[str, float]

    @property
    def latency_ms(self) -> dict[str, float]:
        times = sorted(1000 * s for s in self.ranked.seconds.values()) or [0.0]
        return {
            "mean": statistics.fmean(times),
            "p50": statistics.median(times),
            "p95": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
        }


async def evaluate(
    config: Configuration,
    kind: SetKind,
    data_dir: Path,
    data: BeirData,
    how: str,
    index_root: Path,
    k: int,
) -> Outcome:
    """One configuration's run, in the index directory its indexing settings name."""
    key = index_key(config.settings, kind, data_dir)
    settings = config.settings.model_copy(update={"data_dir": index_root / f"{kind}-{key}"})
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    if kind is SetKind.BEIR:
        ranked = await evaluate_beir(settings, data, Retriever(how))
    else:
        ranked = await evaluate_multihop(settings, data, Mode(how))
    metrics = scores(ranked.rankings, data.qrels, {"ndcg@10": 10}, {f"recall@{k}": k})
    return Outcome(config.name, config.path, key, ranked, metrics)


def report(
    outcomes: Sequence[Outcome], kind: SetKind, data_dir: Path, how: str, k: int
) -> dict[str, Any]:
    """The comparison as the documented JSON object (README, "Comparing configurations")."""
    first = outcomes[0]
    recall = f"recall@{k}"
    rows = []
    for o in outcomes:
        row = {
            "name": o.name,
            "config": str(o.path),
            "index_key": o.index_key,
            "index_reused": not o.ranked.built,
            "embedding": o.ranked.embedding,
            "queries": len(o.ranked.rankings),
            "ndcg@10": o.metrics["ndcg@10"],
            recall: o.metrics[recall],
            "latency_ms": o.latency_ms,
        }
        row["delta"] = {
            "ndcg@10": o.metrics["ndcg@10"] - first.metrics["ndcg@10"],
            recall: o.metrics[recall] - first.metrics[recall],
            "latency_ms_mean": o.latency_ms["mean"] - first.latency_ms["mean"],
        }
        rows.append(row)
    return {
        "schema": SCHEMA,
        "dataset": data_dir.name,
        "kind": kind.value,
        "retriever" if kind is SetKind.BEIR else "mode": how,
        "recall_k": k,
        "configurations": rows,
    }


def table(result: dict[str, Any]) -> str:
    """The comparison as a plain-text table, one row per configuration."""
    recall = f"recall@{result['recall_k']}"
    head = ["configuration", "index", "nDCG@10", "Δ", recall, "Δ", "latency ms", "Δ"]
    lines = [head]
    for row in result["configurations"]:
        delta = row["delta"]
        lines.append([
            row["name"],
            "reused" if row["index_reused"] else "built",
            f"{row['ndcg@10']:.4f}", f"{delta['ndcg@10']:+.4f}",
            f"{row[recall]:.4f}", f"{delta[recall]:+.4f}",
            f"{row['latency_ms']['mean']:.1f}", f"{delta['latency_ms_mean']:+.1f}",
        ])  # fmt: skip
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    how = result.get("retriever") or result.get("mode")
    title = f"{result['dataset']} ({result['kind']}, {how}): {len(lines) - 1} configurations"
    body = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in lines
    ]
    return "\n".join([title, *body])


def check(configs: Sequence[Configuration], kind: SetKind, how: str, k: int) -> None:
    """Raises ValueError with one line saying what to fix."""
    if len(configs) < 2:
        raise ValueError("give two or more configurations (--config A.toml --config B.toml)")
    names = [c.name for c in configs]
    if len(set(names)) < len(names):
        raise ValueError(f"configuration names (file stems) must differ: {', '.join(names)}")
    choices = [r.value for r in Retriever] if kind is SetKind.BEIR else MODES
    if how not in choices:
        what = "--retriever" if kind is SetKind.BEIR else "--mode"
        raise ValueError(f"{what} must be one of {'|'.join(choices)}, not {how!r}")
    if k < 1:
        raise ValueError(f"--recall-k must be at least 1, not {k}")
    for c in configs:
        if (c.settings.storage.search, c.settings.storage.graph) != ("sqlite", "sqlite"):
            raise ValueError(f"{c.path}: eval compare runs on the embedded stores (storage sqlite)")


async def run_compare(
    configs: Sequence[Configuration],
    kind: SetKind,
    data_dir: Path,
    data: BeirData,
    how: str,
    index_root: Path,
    k: int,
    as_json: bool,
) -> None:
    """`data`: the set at `data_dir`, as `open_dataset` checked and read it (split test)."""
    outcomes = [await evaluate(c, kind, data_dir, data, how, index_root, k) for c in configs]
    result = report(outcomes, kind, data_dir, how, k)
    print(json.dumps(result, indent=2) if as_json else table(result))
