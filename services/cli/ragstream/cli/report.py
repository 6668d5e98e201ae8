"""What the client commands print when something goes wrong: one line per problem.

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
from ragstream.cli.files import FileError

err = Console(stderr=True, soft_wrap=True, highlight=False)


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
