"""`ragstream ingest` against servers with a message limit: publish requests are sized by
bytes, a request the server still refuses as too large is split, and a file too large even
alone is reported while the others are indexed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.support.server import ServeProcess

pytestmark = pytest.mark.e2e
SMALL = "Mira Okafor leads the Tern sensor team at Halvorsen Aquatics.\n"
FILLER = " ".join(["the survey of the harbour was done by the team"] * 200) + ".\n\n"
"""A paragraph repeated to any size: it chunks into few distinct chunks, so a large file
indexes quickly and the test measures the request sizes, not the extractor."""


def ingest(server: ServeProcess, folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "ragstream.cli.main", "ingest", str(folder), "--wait"]
    return subprocess.run(
        [*command, "-w", "big", "--server", server.address, "--timeout", "600", *options],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )


def corpus(folder: Path, sizes: Mapping[str, int]) -> Path:
    folder.mkdir()
    (folder / "small.md").write_text(SMALL, encoding="utf-8")
    for name, size in sizes.items():
        (folder / name).write_text(FILLER * (size // len(FILLER) + 1), encoding="utf-8")
    return folder


def serving(tmp_path: Path, **env: str) -> Iterator[ServeProcess]:
    settings = {"RAGSTREAM_CHUNKING__CHUNK_TOKENS": "8192", **env}
    process = ServeProcess(tmp_path / "data", settings).start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    yield from serving(tmp_path)


@pytest.fixture
def one_mb_server(tmp_path: Path) -> Iterator[ServeProcess]:
    yield from serving(tmp_path, RAGSTREAM_SERVER__MAX_MESSAGE_MB="1")


def test_two_nine_megabyte_files_and_a_small_one_are_all_indexed(
    server: ServeProcess, tmp_path: Path
) -> None:
    folder = corpus(tmp_path / "docs", {"big1.md": 9_000_000, "big2.md": 9_000_000})
    result = ingest(server, folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "published 3 documents" in result.stdout
    assert "indexed 3, failed 0" in result.stdout


def test_requests_the_server_finds_too_large_are_split_until_they_fit(
    one_mb_server: ServeProcess, tmp_path: Path
) -> None:
    sizes = {"a.md": 600_000, "b.md": 600_000, "huge.md": 1_500_000}
    result = ingest(one_mb_server, corpus(tmp_path / "docs", sizes))  # 4 MB requests
    assert result.returncode == 1, result.stdout + result.stderr
    assert "huge.md: larger than the server's limit" in result.stderr
    assert "indexed 3, failed 0" in result.stdout  # a.md and b.md apart, and small.md
    assert "Traceback" not in result.stderr
