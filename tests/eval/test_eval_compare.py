"""`ragstream eval compare` on a tiny BEIR set: the table, the JSON, and index reuse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TOPICS = [
    ("volcano", "lava erupts from the volcano crater and ash covers the valley"),
    ("glacier", "the glacier retreats as ice melts into the fjord each summer"),
    ("coral", "coral reefs bleach when the ocean water grows too warm"),
    ("desert", "dunes of sand shift across the desert under a dry wind"),
    ("rainforest", "the rainforest canopy shelters orchids, frogs and parrots"),
]
QUERIES = {
    "q-volcano": "volcano lava eruption",
    "q-glacier": "melting glacier ice",
    "q-coral": "coral reef bleaching",
    "q-desert": "desert sand dunes",
    "q-rainforest": "rainforest canopy parrots",
}


def tiny_beir_set(root: Path) -> Path:
    """20 documents (4 per topic, the first of each relevant) and 5 queries."""
    root.mkdir()
    (root / "qrels").mkdir()
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as corpus:
        for topic, text in TOPICS:
            for n in range(4):
                body = text if n == 0 else f"notes {n} on the {topic}: a short remark"
                corpus.write(json.dumps({"_id": f"{topic}-{n}", "title": "", "text": body}) + "\n")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as queries:
        for query_id, text in QUERIES.items():
            queries.write(json.dumps({"_id": query_id, "text": text}) + "\n")
    qrels = ["query-id\tcorpus-id\tscore"]
    qrels += [f"q-{topic}\t{topic}-0\t1" for topic, _ in TOPICS]
    (root / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    return root


def write_config(path: Path, extra: str = "") -> Path:
    path.write_text('[embedding]\nprovider = "hash"\n' + extra, encoding="utf-8")
    return path


def ragstream(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in `cwd`, with no RAGSTREAM_ settings from the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGSTREAM_")}
    return subprocess.run(
        [sys.executable, "-m", "ragstream.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
        env={**env, "COLUMNS": "200"},
    )


def compare(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return ragstream(tmp_path, "eval", "compare", *args)


def test_compare_prints_one_table_and_reuses_equal_indices(tmp_path: Path) -> None:
    data = tiny_beir_set(tmp_path / "tiny")
    base = write_config(tmp_path / "base.toml")
    fusion = write_config(tmp_path / "fusion.toml", "[query]\nrrf_k = 1\n")
    small = write_config(
        tmp_path / "small.toml", "[chunking]\nchunk_tokens = 16\noverlap_tokens = 4\n"
    )
    configs = [arg for c in (base, fusion, small) for arg in ("--config", str(c))]
    common = ["--data", str(data), *configs, "--index-root", str(tmp_path / "indexes")]

    first = compare(tmp_path, *common, "--json", "--recall-k", "3")
    assert first.returncode == 0, first.stderr[-3000:]
    result: dict[str, Any] = json.loads(first.stdout)
    assert result["schema"] == "ragstream.eval.compare/1"
    assert (result["dataset"], result["kind"], result["retriever"]) == ("tiny", "beir", "hybrid")
    assert result["recall_k"] == 3
    rows = result["configurations"]
    assert [row["name"] for row in rows] == ["base", "fusion", "small"]
    # Only the query settings differ between base and fusion: one index, built once.
    assert rows[0]["index_key"] == rows[1]["index_key"] != rows[2]["index_key"]
    assert [row["index_reused"] for row in rows] == [False, True, False]
    for row in rows:
        assert row["queries"] == 5 and row["embedding"] == "hash:384"
        assert set(row) >= {"ndcg@10", "recall@3", "latency_ms", "delta", "config"}
        assert set(row["latency_ms"]) == {"mean", "p50", "p95"}
        assert 0 < row["latency_ms"]["p50"] <= row["latency_ms"]["p95"]
        for metric in ("ndcg@10", "recall@3"):
            assert row["delta"][metric] == row[metric] - rows[0][metric]
        assert row["delta"]["latency_ms_mean"] == (
            row["latency_ms"]["mean"] - rows[0]["latency_ms"]["mean"]
        )
    assert rows[0]["ndcg@10"] > 0.9 and rows[0]["recall@3"] == 1.0  # an easy set, really searched
    assert rows[0]["delta"] == {"ndcg@10": 0.0, "recall@3": 0.0, "latency_ms_mean": 0.0}

    again = compare(tmp_path, *common)
    assert again.returncode == 0, again.stderr[-3000:]
    title, header, *lines = again.stdout.strip().splitlines()
    assert title == "tiny (beir, hybrid): 3 configurations"
    assert header.split() == ["configuration", "index", "nDCG@10", "Δ", "recall@10", "Δ",
                              "latency", "ms", "Δ"]  # fmt: skip
    assert [line.split()[:2] for line in lines] == [
        ["base", "reused"], ["fusion", "reused"], ["small", "reused"]
    ]  # fmt: skip
    assert lines[0].split()[2:4] == [f"{rows[0]['ndcg@10']:.4f}", "+0.0000"]


def test_compare_needs_two_configurations(tmp_path: Path) -> None:
    data = tiny_beir_set(tmp_path / "tiny")
    one = compare(tmp_path, "--data", str(data), "--config", str(write_config(tmp_path / "a.toml")))
    assert one.returncode == 2
    assert one.stderr.strip() == (
        "error: give two or more configurations (--config A.toml --config B.toml)"
    )
