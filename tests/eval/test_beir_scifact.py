"""BM25 on BEIR SciFact through the real indexing and search path must match published BM25."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(os.environ.get("RAGSTREAM_TEST_DATA", Path(__file__).parents[3] / "shared" / "data"))


def test_scifact_bm25_ndcg_at_10_reaches_published_bm25(tmp_path: Path) -> None:
    scifact = DATA / "scifact"
    if not (scifact / "corpus.jsonl").is_file():
        pytest.fail(f"evaluation data not found at {scifact} (set RAGSTREAM_TEST_DATA)")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragstream.cli.main",
            "eval",
            "beir",
            "--data",
            str(scifact),
            "--retriever",
            "bm25",
            "--json",
            "--index-dir",
            str(tmp_path / "index"),
        ],
        # BM25 ignores vectors; the hashed embedder keeps the index build fast.
        env={**os.environ, "RAGSTREAM_EMBEDDING__PROVIDER": "hash"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["queries"] == 300
    assert report["ndcg@10"] >= 0.66, report
    assert report["recall@100"] >= 0.9, report
