import os
import threading
from pathlib import Path

import pytest

from ragstream.cli.files import FileDocument, FileError, read_all


def test_bad_files_get_a_clear_error_and_the_rest_are_read(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("Mira Okafor leads the Tern team.", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "zh.txt").write_text("周明哲在舟山海试。", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("  \n", encoding="utf-8")
    (tmp_path / "image.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    documents, errors = read_all([tmp_path])
    assert sorted(d.doc_id for d in documents) == ["good.md", "sub/zh.txt"]
    reasons = {e.path.name: e.reason for e in errors}
    assert "empty" in reasons["empty.txt"]
    assert "binary" in reasons["image.bin"]
    assert "UTF-8" in reasons["latin1.txt"]


def test_a_single_file_is_named_by_its_file_name(tmp_path: Path) -> None:
    path = tmp_path / "note.txt"
    path.write_text("hello", encoding="utf-8")
    documents, errors = read_all([path])
    assert not errors
    assert isinstance(documents[0], FileDocument)
    assert documents[0].doc_id == "note.txt"
    assert documents[0].version == path.stat().st_mtime_ns


def test_links_loops_and_fifos_inside_a_folder_are_each_reported(tmp_path: Path) -> None:
    (tmp_path / "good.md").write_text("Mira Okafor leads the Tern team.", encoding="utf-8")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone.md")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "up").symlink_to(tmp_path)
    (tmp_path / "linked.md").symlink_to(tmp_path / "good.md")
    os.mkfifo(tmp_path / "pipe")
    documents, errors = read_all([tmp_path])
    assert sorted(d.doc_id for d in documents) == ["good.md", "linked.md"]
    reasons = {e.path.relative_to(tmp_path).as_posix(): e.reason for e in errors}
    assert set(reasons) == {"loop", "dangling.md", "sub/up", "pipe"}
    assert "loop" in reasons["loop"] and "loop" in reasons["sub/up"]
    assert "dangling" in reasons["dangling.md"] and "gone.md" in reasons["dangling.md"]
    assert "FIFO" in reasons["pipe"]


def test_a_fifo_named_directly_is_reported_without_being_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result: list[tuple[list[FileDocument], list[FileError]]] = []
    reader = threading.Thread(target=lambda: result.append(read_all([tmp_path / "pipe"])))
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # opening a FIFO for reading blocks until a writer comes: unblock it
        with (tmp_path / "pipe").open("wb"):
            pass
        reader.join()
        pytest.fail("read_all opened the FIFO and waited for a writer")
    documents, errors = result[0]
    assert not documents
    assert [e.path.name for e in errors] == ["pipe"] and "FIFO" in errors[0].reason


@pytest.mark.parametrize(
    "encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"], ids=str
)
def test_text_with_a_byte_order_mark_is_read_in_its_encoding(tmp_path: Path, encoding: str) -> None:
    text = "Mira Okafor leads the Tern team in Tromsø. 周明哲在舟山。"
    data = text.encode(encoding)
    if encoding in ("utf-16-le", "utf-16-be"):  # these codecs write no BOM themselves
        data = ("\ufeff" + text).encode(encoding)
    (tmp_path / "note.txt").write_bytes(data)
    documents, errors = read_all([tmp_path])
    assert not errors
    assert documents[0].content == text


def test_a_nul_byte_anywhere_makes_a_file_binary(tmp_path: Path) -> None:
    (tmp_path / "late.txt").write_bytes(b"plain text line\n" * 2000 + b"\x00tail")
    (tmp_path / "bom-then-nul.txt").write_bytes("\ufeffab\x00cd".encode("utf-16-le"))
    documents, errors = read_all([tmp_path])
    assert not documents
    assert {e.path.name for e in errors} == {"late.txt", "bom-then-nul.txt"}
    assert all("binary" in e.reason for e in errors)


def test_the_same_name_in_two_folders_reports_both_and_keeps_the_rest(tmp_path: Path) -> None:
    for folder in ("dirA", "dirB"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "README.md").write_text(f"About {folder}.", encoding="utf-8")
        (tmp_path / folder / f"{folder}.md").write_text(f"Only in {folder}.", encoding="utf-8")
    documents, errors = read_all([tmp_path / "dirA", tmp_path / "dirB"])
    assert sorted(d.doc_id for d in documents) == ["dirA.md", "dirB.md"]
    assert sorted(str(e.path.relative_to(tmp_path)) for e in errors) == [
        "dirA/README.md",
        "dirB/README.md",
    ]
    for error in errors:
        other = "dirB" if error.path.parent.name == "dirA" else "dirA"
        assert "'README.md'" in error.reason and str(tmp_path / other / "README.md") in error.reason


def test_the_same_file_named_twice_is_one_document(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Mira Okafor leads the Tern team.", encoding="utf-8")
    documents, errors = read_all([tmp_path, tmp_path / "a.md"])
    assert not errors
    assert [d.doc_id for d in documents] == ["a.md"]


def test_a_missing_path_is_reported(tmp_path: Path) -> None:
    documents, errors = read_all([tmp_path / "nowhere.md"])
    assert not documents and errors[0].reason == "not found"
