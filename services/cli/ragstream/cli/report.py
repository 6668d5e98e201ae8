"""What the client commands print when something goes wrong: one line per problem, and
what became of each document `ingest` sent (outcomes.py says why).

The console never wraps (a wrapped line reads as two problems, and breaks `grep`), and
file names and server details are escaped, since `[` in a name would read as markup.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import grpc
from rich.console import Console
from rich.markup import escape
from rich.progress import Progress

from ragstream.cli.client import Report
from ragstream.cli.files import FileDocument, FileError
from ragstream.cli.outcomes import not_indexed, skipped_reason, unchanged
from ragstream.v1 import common_pb2, ingest_pb2

err = Console(stderr=True, soft_wrap=True, highlight=False)
out = Console(soft_wrap=True, highlight=False)


def rpc_failure(exc: grpc.aio.AioRpcError, server: str) -> str:
    """The line for a failed call; an unreachable server says how to start one."""
    if exc.code() == grpc.StatusCode.UNAVAILABLE:
        return (
            f"the ragstream server at {server} is not reachable: start it with "
            "`ragstream serve`, or name the right one with --server host:port"
        )
    details = " ".join((exc.details() or "").split())
    return f"error from {server}: {exc.code().name}: {details}"


def print_rpc_failure(exc: grpc.aio.AioRpcError, server: str) -> int:
    """Prints the line; returns exit code 2."""
    err.print(f"[red]error[/red]: {escape(rpc_failure(exc, server))}")
    return 2


def print_skipped(errors: Iterable[FileError]) -> None:
    for error in errors:
        err.print(f"[red]skipped[/red] {escape(str(error.path))}: {escape(error.reason)}")


def waiting_line(documents: int, merges: int | None) -> str:
    """What a wait still waits for, in the words of `ragstream status`."""
    if merges is None:
        return f"indexing: {documents} documents left"
    return f"indexing: {documents} document events, {merges} knowledge-graph merges left"


@contextlib.contextmanager
def waiting() -> Iterator[Report]:
    """A transient progress line on stderr, told the counts through the `Report` it yields."""
    with Progress(transient=True, console=err) as progress:
        task = progress.add_task(waiting_line(0, None), total=None)

        def report(documents: int, merges: int | None) -> None:
            progress.update(task, description=waiting_line(documents, merges))

        yield report


def print_resent(doc_id: str, why: str) -> None:
    out.print(f"sending {escape(doc_id)} again as a new version: {escape(why)}")


def print_outcomes(results: Iterable[ingest_pb2.PublishResult]) -> int:
    """Names each document the index will not take up, and each it holds unchanged; returns
    how many it will not take up."""
    skipped = 0
    for result in results:
        reason = skipped_reason(result)
        if reason is not None:
            err.print(f"[red]skipped[/red] {escape(result.doc_id)}: {escape(reason)}")
            skipped += 1
        elif unchanged(result):
            out.print(
                f"unchanged {escape(result.doc_id)}: the index holds this content already "
                "(--force indexes it again)"
            )
    return skipped


def print_indexed(
    documents: Iterable[FileDocument],
    published: Iterable[ingest_pb2.PublishResult],
    statuses: Iterable[common_pb2.DocumentStatus],
    ignored: int = 0,
) -> int:
    """After a wait: names each document that failed or is not indexed as sent, then the
    counts, with the `ignored` ones already named at publish time among those not indexed.
    Returns the exit code: 0 when every document is indexed, else 1."""
    by_id = {document.doc_id: document for document in documents}
    versions = {result.doc_id: result.version for result in published}
    indexed = failed = 0
    missing = ignored
    for status in statuses:
        reason = not_indexed(by_id[status.doc_id], versions[status.doc_id], status)
        if status.state == common_pb2.DOCUMENT_STATE_FAILED:
            err.print(f"[red]failed[/red] {escape(status.doc_id)}: {escape(status.error)}")
            failed += 1
        elif reason is not None:
            err.print(f"[red]skipped[/red] {escape(status.doc_id)}: {escape(reason)}")
            missing += 1
        else:
            indexed += 1
    counts = f"indexed {indexed}, failed {failed}"
    out.print(f"{counts}, not indexed {missing}" if missing else counts)
    return 1 if failed or missing else 0
