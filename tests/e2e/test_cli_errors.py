"""Each mistake a user can make on the command line: one line saying what to fix, exit code
2, no traceback, and nothing started."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.server import ServeProcess, free_port

pytestmark = pytest.mark.e2e


def ragstream(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragstream.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "RAGSTREAM_EMBEDDING__PROVIDER": "hash", "COLUMNS": "80"},
    )


def one_line_error(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """The single stderr line of a failed command, after checking it names each of `words`."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def test_no_server_running_says_where_and_how_to_start_one() -> None:
    address = f"127.0.0.1:{free_port()}"
    line = one_line_error(ragstream("status", "--server", address), address, "ragstream serve")
    assert "not reachable" in line


def test_a_port_out_of_range_is_refused(tmp_path: Path) -> None:
    result = ragstream("serve", "--data-dir", str(tmp_path / "d"), "--listen", "127.0.0.1:99999")
    one_line_error(result, "127.0.0.1:99999", "65535")
    assert not (tmp_path / "d").exists()


def test_an_address_that_is_no_address_is_refused(tmp_path: Path) -> None:
    result = ragstream("serve", "--data-dir", str(tmp_path / "d"), "--listen", "nonsense")
    one_line_error(result, "nonsense", "host:port")


def test_a_second_serve_on_a_port_in_use_stops(server: ServeProcess, tmp_path: Path) -> None:
    result = ragstream("serve", "--data-dir", str(tmp_path / "d"), "--listen", server.address)
    one_line_error(result, server.address, "in use")
    assert server.process is not None and server.process.poll() is None


def test_an_indexer_health_port_in_use_stops(server: ServeProcess) -> None:
    one_line_error(ragstream("indexer", "--health-listen", server.address), "in use")


def test_a_malformed_config_file_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "ragstream.toml"
    config.write_text("[server]\nlisten = \n", encoding="utf-8")
    one_line_error(ragstream("serve", "--config", str(config)), str(config), "TOML", "line 2")


def test_eval_of_a_missing_dataset_names_the_folder() -> None:
    one_line_error(ragstream("eval", "beir", "--data", "/nonexistent"), "/nonexistent")


def test_eval_with_an_unknown_retriever_stops_before_any_work(tmp_path: Path) -> None:
    dataset = tmp_path / "set"
    (dataset / "qrels").mkdir(parents=True)
    (dataset / "corpus.jsonl").write_text('{"_id": "d1", "text": "Tern."}\n', encoding="utf-8")
    (dataset / "queries.jsonl").write_text('{"_id": "q1", "text": "Tern?"}\n', encoding="utf-8")
    (dataset / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    index = tmp_path / "index"
    result = ragstream("eval", "beir", "--data", str(dataset), "--retriever", "bm42",
                       "--index-dir", str(index))  # fmt: skip
    one_line_error(result, "bm42", "bm25, dense, hybrid")
    assert not index.exists()
    result = ragstream("eval", "multihop", "--data", str(dataset), "--mode", "sideways",
                       "--index-dir", str(index))  # fmt: skip
    one_line_error(result, "sideways", "mix")
    assert not index.exists()


def test_eval_of_an_incomplete_dataset_names_what_is_missing(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "text": "Tern."}\n', encoding="utf-8")
    result = ragstream("eval", "beir", "--data", str(tmp_path), "--split", "dev")
    one_line_error(result, "queries.jsonl", "qrels/dev.tsv")
