"""Client commands: each returns the process exit code (0 ok, 1 some items failed, 2 error)."""

from __future__ import annotations

import json
from pathlib import Path

import grpc
from google.protobuf import json_format
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragstream.cli.client import DEFAULT_BATCH_MB, Client
from ragstream.cli.context import print_context
from ragstream.cli.files import read_all
from ragstream.cli.report import err, print_rpc_failure, print_skipped, waiting
from ragstream.v1 import common_pb2, ingest_pb2, query_pb2

out = Console()
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
) -> int:
    """With `wait`, returns once the documents are indexed and, when `graph`, their
    knowledge-graph merges applied too."""
    documents, errors = read_all(paths)
    print_skipped(errors)
    try:
        async with Client(server) as client:
            published = await client.publish(workspace, documents, batch_mb)
            for doc_id in published.too_large:
                err.print(f"[red]skipped[/red] {escape(doc_id)}: larger than the server's limit")
            results = published.results
            out.print(f"published {len(results)} documents to workspace '{workspace}'")
            skipped = len(errors) + len(published.too_large)
            if wait and results:
                statuses = await _wait(client, workspace, results, timeout_s, graph)
                failed = [s for s in statuses if s.state == common_pb2.DOCUMENT_STATE_FAILED]
                for s in failed:
                    err.print(f"[red]failed[/red] {s.doc_id}: {s.error}")
                out.print(f"indexed {len(statuses) - len(failed)}, failed {len(failed)}")
                return 1 if skipped + len(failed) else 0
    except grpc.aio.AioRpcError as exc:
        return _rpc_error(exc, server)
    except TimeoutError as exc:
        err.print(f"[red]error[/red]: {exc} after {timeout_s:g} s: see `ragstream status`")
        return 2
    return 1 if skipped else 0


async def _wait(
    client: Client,
    workspace: str,
    published: list[ingest_pb2.PublishResult],
    timeout: float,
    graph: bool,
) -> list[common_pb2.DocumentStatus]:
    with waiting() as report:
        return await client.wait_until_indexed(workspace, published, timeout, graph, report)


async def delete(server: str, workspace: str, doc_ids: list[str]) -> int:
    try:
        async with Client(server) as client:
            await client.ingest.DeleteDocuments(
                ingest_pb2.DeleteDocumentsRequest(workspace=workspace, doc_ids=doc_ids)
            )
    except grpc.aio.AioRpcError as exc:
        return _rpc_error(exc, server)
    out.print(f"published delete events for {len(doc_ids)} documents")
    return 0


async def status(server: str, workspace: str, doc_id: str | None) -> int:
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
    table = Table("doc_id", "state", "chunks", "entities", "relations", "ms", "error")
    for s in statuses:
        table.add_row(
            s.doc_id,
            state_name(s.state),
            str(s.chunk_count),
            str(s.entity_count),
            str(s.relation_count),
            f"{s.processing_ms:.0f}",
            s.error,
        )
    out.print(table)
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
    cited = [r for r in response.references if f"[{r.reference_id}]" in response.answer]
    shown = cited or list(response.references)
    out.print("[bold]Sources[/bold]")
    for ref in shown:
        out.print(f"  [{ref.reference_id}] {ref.doc_id}")
    if len(shown) < len(response.references):
        out.print(f"  (and {len(response.references) - len(shown)} more in the context)")
    timings = ", ".join(f"{t.stage} {t.duration_ms:.1f} ms" for t in response.timings)
    out.print(f"[dim]timings: {timings}[/dim]")
    providers = response.providers
    out.print(f"[dim]providers: embedding={providers.embedding}, llm={providers.llm}[/dim]")
