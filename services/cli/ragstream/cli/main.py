"""The `ragstream` command line: servers, client commands and evaluations.

Each command parses its options and hands off to a module; no logic lives here. A mistake
the user can fix (a bad option, config file or address, a server that is not there) is one
line on stderr saying what to fix, and exit code 2; never a traceback.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragstream.cli.eval_main import eval_app
from ragstream.cli.options import (
    DEFAULT_SERVER,
    ConfigOpt,
    ServerOpt,
    WorkspaceOpt,
    choice,
    fail,
    reported,
    settings_from,
)
from ragstream.common.arenas import limit_malloc_arenas
from ragstream.common.listen import ListenError, check_listen

app = typer.Typer(
    help="Streaming knowledge-graph RAG.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals can hold tokens and documents
)
app.add_typer(eval_app, name="eval")


@app.callback()
def _process() -> None:
    """Streaming knowledge-graph RAG."""
    limit_malloc_arenas()  # before any thread starts


communities_app = typer.Typer(help="The workspace's communities.", no_args_is_help=True)
app.add_typer(communities_app, name="communities")


def _listen(option: str, address: str) -> None:
    """Checked before anything starts; the server binds it again (and may still fail)."""
    try:
        check_listen(address)
    except ListenError as exc:
        fail(f"{option}: {exc}")


@app.command()
def serve(
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Embedded data directory.")
    ] = None,
    listen: Annotated[str | None, typer.Option("--listen", help="host:port to listen on.")] = None,
    no_indexer: Annotated[bool, typer.Option("--no-indexer", help="Query service only.")] = False,
    health_listen: Annotated[
        str | None,
        typer.Option(
            "--health-listen",
            help="host:port of a plaintext port serving only grpc.health.v1 (for probes "
            "that cannot speak TLS).",
        ),
    ] = None,
    http_listen: Annotated[
        str | None,
        typer.Option(
            "--http-listen", help="host:port of the HTTP/JSON API and web console (off if unset)."
        ),
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Run the gRPC server, and the indexer on the embedded event log."""
    from ragstream.cli.serve import serve as run

    settings = settings_from(config, data_dir=data_dir)
    _listen("--listen" if listen else "server.listen", listen or settings.server.listen)
    if health_listen:
        _listen("--health-listen", health_listen)
    http = http_listen or settings.server.http_listen
    if http is not None:
        _listen("--http-listen" if http_listen else "server.http_listen", http)
    with reported():
        address = listen or settings.server.listen
        asyncio.run(run(settings, address, not no_indexer, health_listen, http_listen))


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders to index.")],
    *,
    workspace: WorkspaceOpt = "default",
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help="Wait until the documents are indexed and their knowledge-graph merges "
            "applied, so that queries see them whole.",
        ),
    ] = False,
    documents_only: Annotated[
        bool,
        typer.Option(
            "--documents-only",
            help="With --wait: return once the documents are indexed, while their "
            "knowledge-graph merges may still be queued.",
        ),
    ] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait.")] = 600.0,
    server: ServerOpt = DEFAULT_SERVER,
    bus: Annotated[
        str,
        typer.Option(
            "--bus",
            help="grpc: through the server's IngestService; kafka: straight to the "
            "configured Kafka document topic (--wait then asks --server for the status).",
        ),
    ] = "grpc",
    batch_mb: Annotated[
        float,
        typer.Option(
            "--batch-mb",
            min=0.001,
            help="Largest publish request in MB; keep it under the server's "
            "server.max_message_mb (requests it still refuses as too large are split).",
        ),
    ] = 4.0,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Send every document as a new version, above the indexed one, so that it "
            "is indexed again even when the index holds a newer version or the same content.",
        ),
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Publish files as document events.

    Re-ingesting a changed file updates it, and a deleted one brings it back. Documents the
    index will not take up are named, with why."""
    if documents_only and not wait:
        fail("--documents-only only changes what --wait waits for: add --wait")
    graph = not documents_only
    if bus == "kafka":
        from ragstream.cli.publish import KafkaIngest, ingest_to_kafka

        settings = settings_from(config)
        job = KafkaIngest(workspace, paths, wait, timeout, server, graph, force)
        sys.exit(asyncio.run(ingest_to_kafka(settings, job)))
    choice("--bus", bus, ("grpc", "kafka"))
    from ragstream.cli.commands import ingest as run

    sys.exit(asyncio.run(run(server, workspace, paths, wait, timeout, batch_mb, graph, force)))


@app.command()
def indexer(
    health_listen: Annotated[
        str,
        typer.Option("--health-listen", help="host:port of the grpc.health.v1 service."),
    ] = "127.0.0.1:50052",
    config: ConfigOpt = None,
) -> None:
    """Run the indexer alone: one member of the consumer group on the configured bus."""
    from ragstream.indexer.main import run_indexer

    _listen("--health-listen", health_listen)
    settings = settings_from(config)
    with reported():
        asyncio.run(run_indexer(settings, health_listen))


@app.command()
def delete(
    doc_ids: Annotated[list[str], typer.Argument(help="Document ids to delete.")],
    workspace: WorkspaceOpt = "default",
    server: ServerOpt = DEFAULT_SERVER,
) -> None:
    """Publish delete events for documents.

    Exit code 1 names each id that is unknown or already deleted."""
    from ragstream.cli.commands import delete as run

    sys.exit(asyncio.run(run(server, workspace, doc_ids)))


@app.command()
def status(
    doc_id: Annotated[str | None, typer.Argument(help="One document (default: all).")] = None,
    workspace: WorkspaceOpt = "default",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the statuses and the queue as JSON.")
    ] = False,
    server: ServerOpt = DEFAULT_SERVER,
) -> None:
    """Show indexing status of one or all documents.

    A table on a terminal, tab-separated lines when piped; ids are never cut."""
    from ragstream.cli.commands import status as run

    sys.exit(asyncio.run(run(server, workspace, doc_id, as_json)))


@app.command("import-graph")
def import_graph(
    path: Annotated[Path, typer.Argument(help="JSON Lines of entities and relations.")],
    workspace: WorkspaceOpt = "default",
    wait: Annotated[bool, typer.Option("--wait", help="Return once indexed.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds --wait waits.")] = 600,
    server: ServerOpt = DEFAULT_SERVER,
) -> None:
    """Import curated entities and relations, each record naming its source_id."""
    from ragstream.cli.import_graph import import_graph as run

    sys.exit(asyncio.run(run(server, workspace, path, wait, timeout)))


@app.command()
def mcp(
    transport: Annotated[
        str, typer.Option("--transport", help="stdio (default) or http (streamable HTTP).")
    ] = "stdio",
    listen: Annotated[
        str, typer.Option("--listen", help="host:port of the streamable HTTP endpoint (/mcp).")
    ] = "127.0.0.1:8765",
    workspace: Annotated[
        str | None, typer.Option("--workspace", "-w", help="Tools' default workspace.")
    ] = None,
    server: ServerOpt = DEFAULT_SERVER,
    config: ConfigOpt = None,
) -> None:
    """Serve the index as MCP tools, calling a running server's gRPC API."""
    from ragstream.cli.mcp_server import Upstream, run

    if choice("--transport", transport, ("stdio", "http")) == "http":
        _listen("--listen", listen)
    place = workspace or settings_from(config).workspace
    asyncio.run(
        run(Upstream(server, place, os.environ.get("RAGSTREAM_TOKEN", "")), transport, listen)
    )


@app.command()
def query(
    text: Annotated[str, typer.Argument(help="The question.")],
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="local|global|hybrid|mix|naive|bypass|community")
    ] = "",
    context_only: Annotated[bool, typer.Option("--context-only", help="Retrieve only.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the response as JSON.")] = False,
    workspace: WorkspaceOpt = "default",
    server: ServerOpt = DEFAULT_SERVER,
) -> None:
    """Ask a question."""
    from ragstream.cli.commands import ask

    sys.exit(asyncio.run(ask(server, workspace, text, mode, context_only, as_json)))


@app.command()
def reindex(
    delete_old: Annotated[
        bool, typer.Option("--delete-old", help="Delete the old indices after the switch.")
    ] = False,
    cleanup: Annotated[
        bool, typer.Option("--cleanup", help="Only delete indices earlier rebuilds replaced.")
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Re-embed the Elasticsearch indices with the configured embedding model."""
    from ragstream.cli.reindex import run_reindex

    settings = settings_from(config)
    with reported():
        code = asyncio.run(run_reindex(settings, delete_old, cleanup))
    sys.exit(code)


@communities_app.command("rebuild")
def communities_rebuild(
    workspace: WorkspaceOpt = "default",
    wait: Annotated[
        float, typer.Option("--wait", help="Seconds to wait for the indexer (0: do not wait).")
    ] = 120.0,
    config: ConfigOpt = None,
) -> None:
    """Rebuild a workspace's communities from its whole graph (seeded; done by the indexer)."""
    from ragstream.cli.communities import request_rebuild

    settings = settings_from(config)
    with reported():
        code = asyncio.run(request_rebuild(settings, workspace, wait))
    sys.exit(code)


@app.command()
def demo(
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="Folder of documents (default: the packaged demo corpus)."),
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option("--questions", help="JSON list of questions (default: the demo's)."),
    ] = None,
) -> None:
    """Start a server on a temporary directory, ingest the corpus, ask five questions."""
    from ragstream.cli import demo_data
    from ragstream.cli.demo import run_demo

    sys.exit(run_demo(corpus or demo_data.CORPUS, questions or demo_data.QUESTIONS))


if __name__ == "__main__":
    app()
