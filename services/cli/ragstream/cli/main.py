"""The `ragstream` command line: servers, client commands and evaluations.

Each command parses its options and hands off to a module; no logic lives here.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer

from ragstream.common.config import ConfigError, Settings, load_settings
from ragstream.common.errors import BackendUnavailableError

app = typer.Typer(help="Streaming knowledge-graph RAG.", no_args_is_help=True, add_completion=False)
eval_app = typer.Typer(help="Measure retrieval quality on public benchmarks.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file.")]
ServerOpt = Annotated[str, typer.Option("--server", help="host:port of ragstream serve.")]
WorkspaceOpt = Annotated[str, typer.Option("--workspace", "-w", help="Tenant workspace.")]
DEFAULT_SERVER = "127.0.0.1:50051"


def _settings(config: Path | None, **overrides: object) -> Settings:
    try:
        settings = load_settings(config, **{k: v for k, v in overrides.items() if v is not None})
    except (ConfigError, BackendUnavailableError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The Elasticsearch client logs every request at INFO.
    logging.getLogger("elastic_transport").setLevel(max(logging.WARNING, logging.root.level))
    return settings


@app.command()
def serve(
    data_dir: Annotated[
        Path | None, typer.Option("--data-dir", help="Embedded data directory.")
    ] = None,
    listen: Annotated[str | None, typer.Option("--listen", help="host:port to listen on.")] = None,
    no_indexer: Annotated[bool, typer.Option("--no-indexer", help="Query service only.")] = False,
    config: ConfigOpt = None,
) -> None:
    """Run the gRPC server, and the indexer on the embedded event log."""
    from ragstream.cli.serve import serve as run

    settings = _settings(config, data_dir=data_dir)
    address = listen or settings.server.listen
    try:
        asyncio.run(run(settings, address, with_indexer=not no_indexer))
    except (ConfigError, BackendUnavailableError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders to index.")],
    workspace: WorkspaceOpt = "default",
    wait: Annotated[bool, typer.Option("--wait", help="Wait until indexed.")] = False,
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
    config: ConfigOpt = None,
) -> None:
    """Publish files as document events (re-ingesting a changed file updates it)."""
    if bus == "kafka":
        from ragstream.cli.publish import ingest_to_kafka

        settings = _settings(config)
        sys.exit(asyncio.run(ingest_to_kafka(settings, workspace, paths, wait, timeout, server)))
    if bus != "grpc":
        typer.echo(f"--bus must be grpc or kafka, not {bus!r}", err=True)
        raise typer.Exit(2)
    from ragstream.cli.commands import ingest as run

    sys.exit(asyncio.run(run(server, workspace, paths, wait, timeout)))


@app.command()
def indexer(
    health_listen: Annotated[
        str,
        typer.Option("--health-listen", help="host:port of the grpc.health.v1 service."),
    ] = "127.0.0.1:50052",
    config: ConfigOpt = None,
) -> None:
    """Run the indexer alone: one member of the consumer group on the configured bus."""
    from ragstream.common.bus.kafka_admin import KafkaUnavailableError
    from ragstream.indexer.main import run_indexer

    settings = _settings(config)
    try:
        asyncio.run(run_indexer(settings, health_listen))
    except (ConfigError, KafkaUnavailableError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None


@app.command()
def delete(
    doc_ids: Annotated[list[str], typer.Argument(help="Document ids to delete.")],
    workspace: WorkspaceOpt = "default",
    server: ServerOpt = DEFAULT_SERVER,
) -> None:
    """Publish delete events for documents."""
    from ragstream.cli.commands import delete as run

    sys.exit(asyncio.run(run(server, workspace, doc_ids)))


@app.command()
def status(
    doc_id: Annotated[str | None, typer.Argument(help="One document (default: all).")] = None,
    workspace: WorkspaceOpt = "default",
    server: ServerOpt = DEFAULT_SERVER,
) -> None:
    """Show indexing status of one or all documents."""
    from ragstream.cli.commands import status as run

    sys.exit(asyncio.run(run(server, workspace, doc_id)))


@app.command()
def query(
    text: Annotated[str, typer.Argument(help="The question.")],
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="local|global|hybrid|mix|naive|bypass")
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

    settings = _settings(config)
    try:
        sys.exit(asyncio.run(run_reindex(settings, delete_old, cleanup)))
    except (ConfigError, BackendUnavailableError) as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None


@eval_app.command("beir")
def eval_beir(
    data: Annotated[Path, typer.Option("--data", help="BEIR dataset folder.")],
    split: Annotated[str, typer.Option("--split")] = "test",
    retriever: Annotated[str, typer.Option("--retriever", help="bm25|dense|hybrid")] = "hybrid",
    as_json: Annotated[bool, typer.Option("--json")] = False,
    index_dir: Annotated[
        Path | None, typer.Option("--index-dir", help="Reuse an index here.")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """nDCG@10 and recall@10/@100 of a retriever on a BEIR dataset."""
    from ragstream.cli.beir import run_beir

    settings = _settings(config)
    asyncio.run(run_beir(settings, data, split, retriever, as_json, index_dir))


@eval_app.command("multihop")
def eval_multihop(
    data: Annotated[Path, typer.Option("--data", help="Multi-hop set folder (BEIR-like).")],
    mode: Annotated[
        str, typer.Option("--mode", "-m", help="local|global|hybrid|mix|naive")
    ] = "mix",
    as_json: Annotated[bool, typer.Option("--json")] = False,
    index_dir: Annotated[
        Path | None, typer.Option("--index-dir", help="Keep (and reuse) the index here.")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Passage recall@2 and @5 of a query mode on a multi-hop QA set."""
    from ragstream.cli.multihop import run_multihop

    settings = _settings(config, data_dir=index_dir or Path(f"ragstream-eval-{data.name}"))
    asyncio.run(run_multihop(settings, data, mode, as_json))


@app.command()
def demo(
    corpus: Annotated[Path, typer.Option("--corpus", help="Folder of demo documents.")] = Path(
        "demo/corpus"
    ),
    questions: Annotated[Path, typer.Option("--questions")] = Path("demo/questions.json"),
) -> None:
    """Start a server on a temporary directory, ingest the corpus, ask five questions."""
    from ragstream.cli.demo import run_demo

    sys.exit(run_demo(corpus, questions))


if __name__ == "__main__":
    app()
