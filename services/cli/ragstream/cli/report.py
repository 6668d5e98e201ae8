"""What the client commands print when something goes wrong: one line per problem.

The console never wraps (a wrapped line reads as two problems, and breaks `grep`), and
file names and server details are escaped, since `[` in a name would read as markup.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from rich.console import Console
from rich.markup import escape

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
