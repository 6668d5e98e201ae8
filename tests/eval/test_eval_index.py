"""Kept evaluation indexes are reused only for the set and the settings they were built from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragstream.cli import eval_index
from ragstream.cli.eval_index import SetKind, index_key
from ragstream.common.config import Settings
from ragstream.common.providers import minilm
from ragstream.common.text.chunking import CHUNKER_VERSION
from tests.eval.test_eval_compare import ragstream, tiny_beir_set, write_config


def renamed_set(source: Path, target: Path) -> Path:
    """The same texts and queries under other document ids, so a stale index scores 0."""
    target.mkdir()
    (target / "qrels").mkdir()
    corpus = (source / "corpus.jsonl").read_text(encoding="utf-8").replace('"_id": "', '"_id": "b-')
    (target / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (target / "queries.jsonl").write_text(
        (source / "queries.jsonl").read_text(encoding="utf-8"), encoding="utf-8"
    )
    qrels = (source / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    renamed = [qrels[0], *(f"{q}\tb-{d}\t{s}" for q, d, s in (r.split("\t") for r in qrels[1:]))]
    (target / "qrels" / "test.tsv").write_text("\n".join(renamed) + "\n", encoding="utf-8")
    return target


def beir(cwd: Path, data: Path, config: Path, index: Path) -> tuple[dict[str, object], bool]:
    """(the JSON report, whether the run built an index)."""
    result = ragstream(
        cwd, "eval", "beir", "--data", str(data), "--config", str(config),
        "--index-dir", str(index), "--retriever", "bm25", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout), "indexed in" in result.stderr


def test_beir_index_dir_keeps_one_index_per_set_and_settings(tmp_path: Path) -> None:
    first = tiny_beir_set(tmp_path / "first")
    second = renamed_set(first, tmp_path / "second")
    config = write_config(tmp_path / "hash.toml")
    small = write_config(
        tmp_path / "small.toml", "[chunking]\nchunk_tokens = 16\noverlap_tokens = 4\n"
    )
    index = tmp_path / "index"

    report, built = beir(tmp_path, first, config, index)
    assert built and report["ndcg@10"] == 1.0
    # Another set in the same directory gets its own index, not the first set's.
    report, built = beir(tmp_path, second, config, index)
    assert built and report["ndcg@10"] == 1.0
    # The first set again: its index is still there and reused.
    report, built = beir(tmp_path, first, config, index)
    assert not built and report["ndcg@10"] == 1.0
    # Other chunking settings make another index.
    _, built = beir(tmp_path, first, small, index)
    assert built


def test_multihop_index_dir_of_other_settings_is_refused(tmp_path: Path) -> None:
    data = tiny_beir_set(tmp_path / "tiny")
    config = write_config(tmp_path / "hash.toml")
    small = write_config(
        tmp_path / "small.toml", "[chunking]\nchunk_tokens = 16\noverlap_tokens = 4\n"
    )
    index = tmp_path / "index"
    common = ["eval", "multihop", "--data", str(data), "--index-dir", str(index), "--json"]

    built = ragstream(tmp_path, *common, "--config", str(config))
    assert built.returncode == 0, built.stderr[-3000:]
    assert "indexed in" in built.stderr
    reused = ragstream(tmp_path, *common, "--config", str(config))
    assert reused.returncode == 0, reused.stderr[-3000:]
    assert "indexed in" not in reused.stderr
    assert json.loads(reused.stdout) == json.loads(built.stdout)

    refused = ragstream(tmp_path, *common, "--config", str(small))
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert str(index) in lines[0] and "--index-dir" in lines[0]


def test_a_new_chunking_rule_makes_another_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path)
    key = index_key(settings, SetKind.BEIR, tmp_path)
    assert index_key(settings, SetKind.BEIR, tmp_path) == key
    monkeypatch.setattr(eval_index, "CHUNKER_VERSION", CHUNKER_VERSION + 1)
    assert index_key(settings, SetKind.BEIR, tmp_path) != key


def test_another_bundled_model_makes_another_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path)
    key = index_key(settings, SetKind.BEIR, tmp_path)
    monkeypatch.setattr(minilm, "NAME", minilm.NAME + "-next")
    assert index_key(settings, SetKind.BEIR, tmp_path) != key


def test_a_graph_set_indexed_without_resolution_is_another_index(tmp_path: Path) -> None:
    on = index_key(Settings(data_dir=tmp_path), SetKind.MULTIHOP, tmp_path)
    off = Settings(data_dir=tmp_path, resolution={"enabled": False})
    assert index_key(off, SetKind.MULTIHOP, tmp_path) != on
    assert index_key(off, SetKind.BEIR, tmp_path) == index_key(
        Settings(data_dir=tmp_path), SetKind.BEIR, tmp_path
    )
