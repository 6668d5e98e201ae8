"""Turns files and folders into documents for ingestion, with a clear error per bad file.

Doc ids: the path relative to the folder given, or the file name for a single file, so
re-ingesting the same tree updates the same documents. Two different files that would get
the same id (`ingest dirA dirB`, both holding README.md) are both reported and neither is
sent, since either would silently replace the other. Versions are the file's mtime in
nanoseconds, so a changed file supersedes its earlier version.

Only regular files are read. Everything is looked at with stat before anything is opened, so
a FIFO is reported and never opened (opening one blocks until a writer comes); symbolic links
are followed, and a dangling link or a loop is reported. Hidden names (".git") are skipped.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ragstream.common.formats import CONVERTED_SUFFIXES, ConversionError, convert

MAX_FILE_BYTES = 10_000_000
"""Text files; the server's default limit on a document's content."""
MAX_CONVERTED_BYTES = 100_000_000
"""PDF and DOCX files, which hold images and fonts beside their text."""
_SPECIAL = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


@dataclass(frozen=True, slots=True)
class FileDocument:
    doc_id: str
    path: Path
    content: str
    version: int
    metadata: Mapping[str, str] = field(default_factory=dict)
    """format, title and, for paged formats, pages (formats/__init__.py)."""


@dataclass(frozen=True, slots=True)
class FileError:
    path: Path
    reason: str


@dataclass(frozen=True, slots=True)
class Found:
    """A regular file found by `discover`, not yet read."""

    doc_id: str
    path: Path
    inode: tuple[int, int]


def _stat(path: Path) -> os.stat_result | FileError:
    """The file's stat, following links; a dangling link or a loop is a FileError."""
    try:
        return path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return FileError(path, "symbolic link loop: it never reaches a file")
        if path.is_symlink():
            return FileError(path, f"dangling symbolic link to {os.readlink(path)}")
        if exc.errno == errno.ENOENT:
            return FileError(path, "not found")
        return FileError(path, f"cannot read: {exc.strerror or exc}")


def _not_regular(path: Path, info: os.stat_result) -> FileError:
    kind = _SPECIAL.get(stat.S_IFMT(info.st_mode), "not a regular file")
    return FileError(path, f"{kind}, not a regular file: skipped without opening it")


def discover(paths: Iterable[Path]) -> Iterator[Found | FileError]:
    """Every file named, or found below a folder named, in sorted order, and an error for
    each entry that is not a readable regular file."""
    for root in paths:
        info = _stat(root)
        if isinstance(info, FileError):
            yield info
        elif stat.S_ISDIR(info.st_mode):
            yield from _walk(root, root, [(info.st_dev, info.st_ino)])
        elif stat.S_ISREG(info.st_mode):
            yield Found(root.name, root, (info.st_dev, info.st_ino))
        else:
            yield _not_regular(root, info)


def _walk(root: Path, folder: Path, above: list[tuple[int, int]]) -> Iterator[Found | FileError]:
    """`above`: the (device, inode) of each folder from the root down to this one, so a link
    back to one of them is reported as a loop instead of walked forever."""
    try:
        names = sorted(entry.name for entry in os.scandir(folder))
    except OSError as exc:
        yield FileError(folder, f"cannot list the folder: {exc.strerror or exc}")
        return
    for name in names:
        if name.startswith("."):
            continue
        path = folder / name
        info = _stat(path)
        if isinstance(info, FileError):
            yield info
        elif stat.S_ISDIR(info.st_mode):
            if (info.st_dev, info.st_ino) in above:
                yield FileError(path, "symbolic link loop: it leads back to a folder above it")
            else:
                yield from _walk(root, path, [*above, (info.st_dev, info.st_ino)])
        elif stat.S_ISREG(info.st_mode):
            yield Found(path.relative_to(root).as_posix(), path, (info.st_dev, info.st_ino))
        else:
            yield _not_regular(path, info)


def unique(found: Iterable[Found]) -> tuple[list[Found], list[FileError]]:
    """Each file once; files that would share a doc id are errors, each naming the other."""
    by_id: dict[str, list[Found]] = {}
    for item in found:
        same_id = by_id.setdefault(item.doc_id, [])
        if all(other.inode != item.inode for other in same_id):  # the same file named twice
            same_id.append(item)
    kept = [items[0] for items in by_id.values() if len(items) == 1]
    errors = [
        FileError(
            item.path,
            f"doc id {item.doc_id!r} also belongs to "
            + ", ".join(str(other.path) for other in items if other is not item)
            + ": rename one, or ingest a folder holding both so the ids differ",
        )
        for items in by_id.values()
        if len(items) > 1
        for item in items
    ]
    return kept, errors


def _read(path: Path) -> bytes | FileError:
    """The bytes of a regular file: opened without blocking (in case it was swapped for a
    FIFO since it was looked at) and checked again once open."""
    limit = MAX_CONVERTED_BYTES if path.suffix.lower() in CONVERTED_SUFFIXES else MAX_FILE_BYTES
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return FileError(path, f"cannot read: {exc.strerror or exc}")
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return _not_regular(path, info)
        if info.st_size > limit:
            return FileError(path, f"larger than {limit} bytes")
        try:
            data = file.read(limit + 1)
        except OSError as exc:
            return FileError(path, f"cannot read: {exc.strerror or exc}")
    return data if len(data) <= limit else FileError(path, f"larger than {limit} bytes")


def read_document(found: Found) -> FileDocument | FileError:
    """The file as a document, or why it cannot be one (unreadable, empty, binary, damaged)."""
    data = _read(found.path)
    if isinstance(data, FileError):
        return data
    try:
        converted = convert(found.path, data)
        version = found.path.stat().st_mtime_ns
    except ConversionError as exc:
        return FileError(found.path, str(exc))
    except OSError as exc:
        return FileError(found.path, f"cannot read: {exc.strerror or exc}")
    if len(converted.text.encode()) > MAX_FILE_BYTES:
        return FileError(found.path, f"its text is larger than {MAX_FILE_BYTES} bytes")
    return FileDocument(found.doc_id, found.path, converted.text, version, converted.metadata)


def read_all(paths: Iterable[Path]) -> tuple[list[FileDocument], list[FileError]]:
    """The documents of every readable file, and one error for every other entry."""
    found: list[Found] = []
    errors: list[FileError] = []
    for item in discover(paths):
        if isinstance(item, Found):
            found.append(item)
        else:
            errors.append(item)
    kept, duplicates = unique(found)
    errors.extend(duplicates)
    documents: list[FileDocument] = []
    for result in map(read_document, kept):
        if isinstance(result, FileDocument):
            documents.append(result)
        else:
            errors.append(result)
    return documents, errors
