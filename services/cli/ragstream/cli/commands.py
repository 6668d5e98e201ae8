"""Client commands: each returns the process exit code (0 ok, 1 some items failed, 2 error)."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
from google.protobuf import json_format
from rich.console import Console
from rich.markup import escape

from ragstream.cli.client import DEFAULT_BATCH_MB, Client, Published
from ragstream.cli.context import print_context
from ragstream.cli.files import FileDocument, read_all
from ragstream.cli.outcomes import INDEXED, merged, not_deleted, to_resend
from ragstream.cli.references import reference_line
from ragstream.cli.report import (
    err,
    print_indexed,
    print_outcomes,
    print_resent,
    print_rpc_failure,
    print_skipped,
    waiting,
)
from ragstream.cli.table import print_table
from ragstream.v1 import common_pb2, ingest_pb2, query_pb2

out = Console()
STATUS_COLUMNS = ("doc_id", "state", "chunks", "entities", "relations", "ms", "error")
_MODES = {
    "local": query_pb2.QUERY_MODE_LOCAL,
    "global": query_pb2.QUERY_MODE_GLOBAL,
    "hybrid": query_pb2.QUERY_MODE_HYBRID,
    "mix": query_pb2.QUERY_MODE_MIX,
    "naive": query_pb2.QUERY_MODE_NAIVE,
    "bypass": query_pb2.QUERY_MODE_BYPASS,
    "community": query_pb2.QUERY_MODE_COMMUNITY,
    "": query_pb2.QUERY_MODE_UNSPECIFIED,
}


def _rpc_error(exc: grpc.aio.AioRpcError, server: str) -> int:
    return print_rpc_failure(exc, server)


def state_name(state: int) -> str:
    return common_pb2.DocumentState.Name(state).removeprefix("DOCUMENT_STATE_").lower()


async def ingest(
    server: str,
    workspace: str,
    paths: list[Path],
    wait: bool,
    timeout_s: float,
    batch_mb: float = DEFAULT_BATCH_MB,
    graph: bool = True,
    force: bool = False,
) -> int:
    """With `wait`, returns once the documents are indexed and, when `graph`, their
    knowledge-graph merges applied too. Each document the index will not take up is named
    with the reason (outcomes.py)."""
    documents, errors = read_all(paths)
    print_skipped(errors)
    try:
        async with Client(server) as client:
            published = await _publish(client, workspace, documents, batch_mb, force)
            results = published.results
            out.print(f"published {len(results)} documents to workspace '{workspace}'")
            bad_files = len(errors) + len(published.too_large)
            ignored = print_outcomes(results)
            indexing = [r for r in results if r.outcome in INDEXED]
            if wait:
                statuses = await _wait(client, workspace, indexing, timeout_s, graph)
                code = print_indexed(documents, indexing, statuses, ignored)
                return max(code, 1 if bad_files else 0)
    except grpc.aio.AioRpcError as exc:
        return _rpc_error(exc, server)
    except TimeoutError as exc:
        err.print(f"[red]error[/red]: {exc} after {timeout_s:g} s: see `ragstream status`")
        return 2
    return 1 if bad_files + ignored else 0


async def _publish(
    client: Client,
    workspace: str,
    documents: list[FileDocument],
    batch_mb: float,
    force: bool,
) -> Published:
    """Publishes the documents, then again, as new versions, those the index would ignore
    that should not be ignored: the deleted ones, and with `force` the older and unchanged."""
    published = await client.publish(workspace, documents, batch_mb)
    for doc_id in published.too_large:
        err.print(f"[red]skipped[/red] {escape(doc_id)}: larger than the server's limit")
    again = to_resend(documents, published.results, force)
    if again:
        for document, why in again:
            print_resent(document.doc_id, why)
        second = await client.publish(workspace, [document for document, _ in again], batch_mb)
        published.results = merged(published.results, second.results)
    return published


async def _wait(
    client: Client,
    workspace: str,
    published: list[ingest_pb2.PublishResult],
    timeout: float,
    graph: bool,
) -> list[common_pb2.DocumentStatus]:
    if not published:
        return []
    with waiting() as report:
        return await client.wait_until_indexed(workspace, published, timeout, graph, report)


async def delete(server: str, workspace: str, doc_ids: list[str]) -> int:
    """Exit code 1 when some ids were not deleted (unknown, or already deleted)."""
    try:
        async with Client(server) as client:
            response = await client.ingest.DeleteDocuments(
                ingest_pb2.DeleteDocumentsRequest(workspace=workspace, doc_ids=doc_ids)
            )
    except grpc.aio.AioRpcError as exc:
        return _rpc_error(exc, server)
    refused = 0
    for result in response.results:
        reason = not_deleted(result, workspace)
        if reason is not None:
            err.print(f"[red]not deleted[/red] {escape(result.doc_id)}: {reason}")
            refused += 1
    deleting = len(response.results) - refused
    if deleting:
        out.print(f"published delete events for {deleting} documents")
    return 1 if refused else 0


async def status(server: str, workspace: str, doc_id: str | None, as_json: bool = False) -> int:
    try:
        async with Client(server) as client:
            if doc_id:
                statuses = await client.status(workspace, [doc_id])
            else:
                statuses = await client.list_all(workspace, common_pb2.DOCUMENT_STATE_UNSPECIFIED)
            documents, merges = await client.progress(workspace)
    except grpc.aio.AioRpcError as exc:
        return _rpc_error(exc, server)
    if doc_id and not statuses:
        err.print(f"unknown document {doc_id!r} in workspace '{workspace}'")
        return 1
    if as_json:
        queued = {"documentEvents": documents, "graphMerges": merges}
        listed = [json_format.MessageToDict(s) for s in statuses]
        out.print_json(json.dumps({"workspace": workspace, "documents": listed, "queued": queued}))
        return 0
    rows = [
        (
            s.doc_id,
            state_name(s.state),
            str(s.chunk_count),
            str(s.entity_count),
            str(s.relation_count),
            f"{s.processing_ms:.0f}",
            s.error,
        )
        for s in statuses
    ]
    print_table(out, STATUS_COLUMNS, rows)
    out.print(f"queued: {documents} document events, {merges} knowledge-graph merges")
    return 0


async def ask(
    server: str, workspace: str, text: str, mode: str, context_only: bool, as_json: bool
) -> int:
    if mode not in _MODES:
        err.print(f"unknown mode {mode!r}: choose one of {', '.join(m for m in _MODES if m)}")
        return 2
    request = query_pb2.QueryRequest(
        workspace=workspace,
        query=text,
        params=query_pb2.QueryParams(mode=_MODES[mode], only_need_context=context_only),
    )
    try:
        async with Client(server) as client:
            response = await client.ask(request)
    except grpc.aio.AioRpcError as exc:
        return _rpc_error(exc, server)
    if as_json:
        out.print_json(json.dumps(json_format.MessageToDict(response)))
    elif context_only:
        print_context(response, out)
    else:
        print_answer(response)
    return 0


def print_answer(response: query_pb2.QueryResponse) -> None:
    if response.answer:
        out.print(response.answer)
    for note in response.notes:
        out.print(f"[yellow]note:[/yellow] {note}")
    # The server lists the passages the answer cites; the context's all are apart.
    shown = list(response.references)
    listed = len(response.context_references) or len(shown)
    out.print("[bold]Sources[/bold]")
    for ref in shown:
        out.print(f"  {escape(reference_line(ref))}")
    if len(shown) < listed:
        out.print(f"  (and {listed - len(shown)} more in the context)")
    timings = ", ".join(f"{t.stage} {t.duration_ms:.1f} ms" for t in response.timings)
    out.print(f"[dim]timings: {timings}[/dim]")
    providers = response.providers
    out.print(f"[dim]providers: embedding={providers.embedding}, llm={providers.llm}[/dim]")
