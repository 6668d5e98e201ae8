"""The `ragstream` command line: servers, client commands and evaluations.

Each command parses its options and hands off to a module; no logic lives here. A mistake
the user can fix (a bad option, config file or address, a server that is not there) is one
line on stderr saying what to fix, and exit code 2; never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from ragstream.common.config import ConfigError, Settings, load_settings
from ragstream.common.errors import BackendUnavailableError
from ragstream.common.listen import ListenError, check_listen

app = typer.Typer(
    help="Streaming knowledge-graph RAG.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,  # locals can hold tokens and documents
)
eval_app = typer.Typer(help="Measure retrieval quality on public benchmarks.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
communities_app = typer.Typer(help="The workspace's communities.", no_args_is_help=True)
app.add_typer(communities_app, name="communities")

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file.")]
ServerOpt = Annotated[str, typer.Option("--server", help="host:port of ragstream serve.")]
WorkspaceOpt = Annotated[str, typer.Option("--workspace", "-w", help="Tenant workspace.")]
DEFAULT_SERVER = "127.0.0.1:50051"
USER_ERRORS = (ConfigError, BackendUnavailableError, ListenError)
"""What a user can fix; each carries a message that says how."""


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@contextlib.contextmanager
def _reported() -> Iterator[None]:
    """Turns a user error into its one line and exit code 2."""
    try:
        yield
    except USER_ERRORS as exc:
        _fail(str(exc))


def _choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        _fail(f"{option} {value!r} is not one of {', '.join(choices)}")
    return value


def _listen(option: str, address: str) -> None:
    """Checked before anything starts; the server binds it again (and may still fail)."""
    try:
        check_listen(address)
    except ListenError as exc:
        _fail(f"{option}: {exc}")


def _settings(config: Path | None, **overrides: object) -> Settings:
    with _reported():
        settings = load_settings(config, **{k: v for k, v in overrides.items() if v is not None})
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

    settings = _settings(config, data_dir=data_dir)
    _listen("--listen" if listen else "server.listen", listen or settings.server.listen)
    if health_listen:
        _listen("--health-listen", health_listen)
    http = http_listen or settings.server.http_listen
    if http is not None:
        _listen("--http-listen" if http_listen else "server.http_listen", http)
    with _reported():
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
    config: ConfigOpt = None,
) -> None:
    """Publish files as document events (re-ingesting a changed file updates it)."""
    if documents_only and not wait:
        _fail("--documents-only only changes what --wait waits for: add --wait")
    graph = not documents_only
    if bus == "kafka":
        from ragstream.cli.publish import ingest_to_kafka

        settings = _settings(config)
        sys.exit(
            asyncio.run(ingest_to_kafka(settings, workspace, paths, wait, timeout, server, graph))
        )
    _choice("--bus", bus, ("grpc", "kafka"))
    from ragstream.cli.commands import ingest as run

    sys.exit(asyncio.run(run(server, workspace, paths, wait, timeout, batch_mb, graph)))


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
    settings = _settings(config)
    with _reported():
        asyncio.run(run_indexer(settings, health_listen))


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

    settings = _settings(config)
    with _reported():
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

    settings = _settings(config)
    with _reported():
        code = asyncio.run(request_rebuild(settings, workspace, wait))
    sys.exit(code)


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
    from ragstream.query.search import Retriever

    chosen = Retriever(_choice("--retriever", retriever, tuple(Retriever)))
    from ragstream.cli.beir import DatasetError, open_dataset, run_beir  # the slow imports

    try:
        dataset = open_dataset(data, split)
    except DatasetError as exc:
        _fail(str(exc))
    settings = _settings(config)
    with _reported():
        asyncio.run(run_beir(settings, data, dataset, split, chosen, as_json, index_dir))


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
    from ragstream.query.types import Mode

    modes = tuple(m for m in Mode if m not in (Mode.BYPASS, Mode.COMMUNITY))
    chosen = Mode(_choice("--mode", mode, modes))
    from ragstream.cli.beir import DatasetError, open_dataset  # the slow imports
    from ragstream.cli.multihop import run_multihop

    try:
        dataset = open_dataset(data, "test")
    except DatasetError as exc:
        _fail(str(exc))
    settings = _settings(config, data_dir=index_dir or Path(f"ragstream-eval-{data.name}"))
    with _reported():
        asyncio.run(run_multihop(settings, data, dataset, chosen, as_json))


@eval_app.command("compare")
def eval_compare(
    data: Annotated[Path, typer.Option("--data", help="Evaluation set folder (BEIR format).")],
    configs: Annotated[
        list[Path], typer.Option("--config", help="A named configuration (TOML); two or more.")
    ],
    kind: Annotated[str, typer.Option("--set", help="beir|multihop")] = "beir",
    retriever: Annotated[
        str, typer.Option("--retriever", help="beir: bm25|dense|hybrid")
    ] = "hybrid",
    mode: Annotated[str, typer.Option("--mode", "-m", help="multihop: query mode")] = "mix",
    recall_k: Annotated[int, typer.Option("--recall-k", help="k of recall@k.")] = 10,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    index_root: Annotated[
        Path, typer.Option("--index-root", help="Indices kept (and reused) here.")
    ] = Path("ragstream-eval-indexes"),
) -> None:
    """nDCG@10, recall@k and latency of one set under several configurations, side by side."""
    from ragstream.cli.beir import DatasetError, open_dataset
    from ragstream.cli.compare import Configuration, check, run_compare
    from ragstream.cli.eval_index import SetKind

    chosen = SetKind(_choice("--set", kind, tuple(SetKind)))
    loaded = [Configuration(path.stem, path, _settings(path)) for path in configs]
    how = retriever if chosen is SetKind.BEIR else mode
    try:
        check(loaded, chosen, how, recall_k)
        dataset = open_dataset(data, "test")
    except (ValueError, DatasetError) as exc:
        _fail(str(exc))
    with _reported():
        asyncio.run(run_compare(loaded, chosen, data, dataset, how, index_root, recall_k, as_json))


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
