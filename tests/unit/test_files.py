from pathlib import Path

from ragstream.cli.files import FileDocument, read_all


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
