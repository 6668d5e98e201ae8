"""Turns files and folders into documents for ingestion, with a clear error per bad file.

Doc ids: the path relative to the folder given, or the file name for a single file, so
re-ingesting the same tree updates the same documents. Versions are the file's mtime in
nanoseconds, so a changed file supersedes its earlier version.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

TEXT_SUFFIXES = frozenset({".txt", ".md", ".markdown", ".rst", ".text", ".csv", ".json", ".html"})
MAX_FILE_BYTES = 10_000_000


@dataclass(frozen=True, slots=True)
class FileDocument:
    doc_id: str
    path: Path
    content: str
    version: int


@dataclass(frozen=True, slots=True)
class FileError:
    path: Path
    reason: str


def discover(paths: Iterable[Path]) -> Iterator[tuple[str, Path]]:
    """(doc_id, path) for every file named or found below a folder, in sorted order."""
    for root in paths:
        if root.is_dir():
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                if not any(part.startswith(".") for part in path.relative_to(root).parts):
                    yield path.relative_to(root).as_posix(), path
        else:
            yield root.name, root


def read_document(doc_id: str, path: Path) -> FileDocument | FileError:
    """The file as a document, or why it cannot be one (missing, empty, binary, not UTF-8)."""
    try:
        data = path.read_bytes()
        version = path.stat().st_mtime_ns
    except OSError as exc:
        return FileError(path, f"cannot read: {exc.strerror or exc}")
    if len(data) > MAX_FILE_BYTES:
        return FileError(path, f"larger than {MAX_FILE_BYTES} bytes")
    if b"\x00" in data[:8192]:
        return FileError(path, "binary file (contains NUL bytes); only text is indexed")
    try:
        content = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return FileError(path, f"not valid UTF-8 (byte {exc.start}): convert it to UTF-8 first")
    if not content.strip():
        return FileError(path, "empty file: nothing to index")
    return FileDocument(doc_id, path, content, version)


def read_all(paths: Iterable[Path]) -> tuple[list[FileDocument], list[FileError]]:
    documents: list[FileDocument] = []
    errors: list[FileError] = []
    for doc_id, path in discover(paths):
        result = read_document(doc_id, path)
        if isinstance(result, FileDocument):
            documents.append(result)
        else:
            errors.append(result)
    return documents, errors
