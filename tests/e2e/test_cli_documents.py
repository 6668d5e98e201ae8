"""`ragstream ingest` of real documents and bad entries, as a user runs it, then what a
query finds: each bad entry is reported by name and everything else is indexed."""

import os
import subprocess
from pathlib import Path

import grpc
import pytest

from ragstream.v1 import common_pb2, query_pb2, query_pb2_grpc
from tests.support.documents import corrupt_pdf_bytes, docx_bytes, pdf_bytes
from tests.support.server import ServeProcess, ragstream_cli

pytestmark = pytest.mark.e2e
PAGE = """<html><head><title>Skua sonar</title><style>p { color: red }</style>
<script>document.write("<p>hidden</p>")</script></head>
<body><h1>Skua sonar</h1><p>Jonas Virtanen calibrated the <b>Skua</b> sonar array.</p>
</body></html>"""


def ragstream(
    server: ServeProcess, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return ragstream_cli(server, *args, columns=80, timeout_s=timeout)


def context_text(server: ServeProcess, workspace: str, query: str, **metadata: str) -> str:
    with grpc.insecure_channel(server.address) as channel:
        response = query_pb2_grpc.QueryServiceStub(channel).Retrieve(
            query_pb2.RetrieveRequest(
                workspace=workspace,
                query=query,
                params=query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_NAIVE, chunk_top_k=20),
                filter=common_pb2.SearchFilter(metadata=metadata),
            )
        )
    return "\n".join(chunk.content for chunk in response.context.chunks)


def reported(result: subprocess.CompletedProcess[str], name: str, reason: str) -> bool:
    return any(name in line and reason in line for line in result.stderr.splitlines())


def test_pdf_docx_and_html_are_indexed_as_text_and_a_corrupt_pdf_is_reported(
    server: ServeProcess, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(
        pdf_bytes(["Mira Okafor leads the Tern hull team.", "Sea trials ran at Tromso."], "Tern")
    )
    (folder / "notes.docx").write_bytes(
        docx_bytes("Petrel notes", ["Ada Lindqvist tested the Petrel winch."])
    )
    (folder / "sonar.html").write_text(PAGE, encoding="utf-8")
    (folder / "broken.pdf").write_bytes(corrupt_pdf_bytes())
    result = ragstream(server, "ingest", str(folder), "--wait", "-w", "docs")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().count("\n") == 0 and reported(result, "broken.pdf", "damaged PDF")
    assert "indexed 3, failed 0" in result.stdout
    pdf = context_text(server, "docs", "Tern hull team sea trials", format="pdf", pages="2")
    assert "Mira Okafor leads the Tern hull team." in pdf and "Sea trials ran at Tromso." in pdf
    assert "%PDF" not in pdf and "endobj" not in pdf
    docx = context_text(server, "docs", "Petrel winch", format="docx", title="Petrel notes")
    assert "Ada Lindqvist tested the Petrel winch." in docx and "<w:" not in docx
    html = context_text(server, "docs", "Skua sonar array", format="html", title="Skua sonar")
    assert "Jonas Virtanen calibrated the Skua sonar array." in html
    assert "<" not in html and "hidden" not in html and "color" not in html


def test_the_same_name_in_two_folders_is_reported_and_the_rest_indexed(
    server: ServeProcess, tmp_path: Path
) -> None:
    for folder in ("dirA", "dirB"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "README.md").write_text(f"Readme of {folder}.", encoding="utf-8")
        (tmp_path / folder / f"{folder}.md").write_text(f"Ada owns {folder}.", encoding="utf-8")
    result = ragstream(server, "ingest", str(tmp_path / "dirA"), str(tmp_path / "dirB"),
                       "--wait", "-w", "dupes")  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    for folder in ("dirA", "dirB"):
        assert reported(result, f"{folder}/README.md", "'README.md'"), result.stderr
    assert "indexed 2, failed 0" in result.stdout
    status = ragstream(server, "status", "-w", "dupes")
    assert "dirA.md" in status.stdout and "dirB.md" in status.stdout
    assert "README" not in status.stdout


def test_links_fifos_and_encodings_are_each_handled(server: ServeProcess, tmp_path: Path) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "utf16.txt").write_bytes(
        "\ufeffSigrid Dahl repaired the Fulmar mast.".encode("utf-16-le")
    )
    (folder / "late-nul.txt").write_bytes(b"fine text\n" * 1000 + b"\x00")
    (folder / "loop").symlink_to(folder / "loop")
    (folder / "dangling.md").symlink_to(folder / "missing.md")
    os.mkfifo(folder / "pipe")
    os.mkfifo(tmp_path / "named-pipe")
    result = ragstream(server, "ingest", str(folder), str(tmp_path / "named-pipe"), "--wait",
                       "-w", "odd", timeout=60)  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    expected = [("late-nul.txt", "binary"), ("loop", "loop"), ("dangling.md", "dangling"),
                ("odd/pipe", "FIFO"), ("named-pipe", "FIFO")]  # fmt: skip
    for name, reason in expected:
        assert reported(result, name, reason), result.stderr
    assert len(result.stderr.strip().splitlines()) == 5
    assert "indexed 1, failed 0" in result.stdout
    assert "Sigrid Dahl repaired the Fulmar mast." in context_text(server, "odd", "Fulmar mast")


def test_context_only_prints_the_context_for_a_person(server: ServeProcess, tmp_path: Path) -> None:
    (tmp_path / "tern.md").write_text(
        "# Tern\n\nMira Okafor leads the Tern hull team in Tromso.", encoding="utf-8"
    )
    assert ragstream(server, "ingest", str(tmp_path), "--wait", "-w", "ctx").returncode == 0
    result = ragstream(server, "query", "Who leads the Tern hull team?", "--context-only",
                       "-m", "naive", "-w", "ctx")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Chunks (1)" in result.stdout
    assert "[1] tern.md" in result.stdout
    assert "Mira Okafor leads the Tern hull team in Tromso." in result.stdout
    assert "{" not in result.stdout  # not JSON
