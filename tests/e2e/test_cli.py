"""The `ragstream` client commands against a running server, as a user runs them."""

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.server import ServeProcess, ragstream_cli

pytestmark = pytest.mark.e2e


def ragstream(server: ServeProcess, *args: str) -> subprocess.CompletedProcess[str]:
    return ragstream_cli(server, *args)


def test_bad_files_are_reported_and_the_others_indexed(
    server: ServeProcess, tmp_path: Path
) -> None:
    (tmp_path / "good.md").write_text("Tomasz Brejcha designed the Skua 3 hull.", encoding="utf-8")
    (tmp_path / "zh.md").write_text("周明哲在舟山完成了海试。", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(bytes(range(256)))
    (tmp_path / "latin1.txt").write_bytes("Brejcha\xe9".encode("latin-1"))
    result = ragstream(server, "ingest", str(tmp_path), "--wait", "-w", "cli")
    assert result.returncode == 1, result.stdout + result.stderr
    for name, reason in [("empty.txt", "empty"), ("blob.bin", "binary"), ("latin1.txt", "UTF-8")]:
        assert any(name in line and reason in line for line in result.stderr.splitlines()), (
            result.stderr
        )
    assert "indexed 2, failed 0" in result.stdout
    status = ragstream(server, "status", "-w", "cli")
    assert "good.md" in status.stdout and "zh.md" in status.stdout and "processed" in status.stdout


def test_changed_file_updates_and_delete_removes(server: ServeProcess, tmp_path: Path) -> None:
    doc = tmp_path / "note.md"
    doc.write_text("The Petrel 2 robot inspects fish farms near Skjervik.", encoding="utf-8")
    assert ragstream(server, "ingest", str(doc), "--wait", "-w", "cli2").returncode == 0
    doc.write_text("The Petrel 2 robot now inspects offshore wind turbines.", encoding="utf-8")
    os.utime(doc, ns=(doc.stat().st_atime_ns, doc.stat().st_mtime_ns + 1_000_000))
    assert ragstream(server, "ingest", str(doc), "--wait", "-w", "cli2").returncode == 0
    answer = ragstream(
        server, "query", "What does the Petrel 2 inspect?", "--context-only", "--json", "-w", "cli2"
    )
    assert "wind turbines" in answer.stdout and "Skjervik" not in answer.stdout
    assert ragstream(server, "delete", "note.md", "-w", "cli2").returncode == 0
    for _ in range(50):
        status = ragstream(server, "status", "note.md", "-w", "cli2")
        if "deleted" in status.stdout:
            break
    assert "deleted" in status.stdout
    after = ragstream(server, "query", "Petrel 2 inspect", "--context-only", "--json", "-w", "cli2")
    assert "wind turbines" not in after.stdout


def test_unknown_mode_is_a_clear_error(server: ServeProcess) -> None:
    result = ragstream(server, "query", "anything", "--mode", "sideways")
    assert result.returncode == 2
    assert "unknown mode" in result.stderr
