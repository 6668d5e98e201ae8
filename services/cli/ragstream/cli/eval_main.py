"""`ragstream eval`: retrieval quality on public benchmarks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from ragstream.cli.options import ConfigOpt, choice, fail, reported, settings_from

eval_app = typer.Typer(help="Measure retrieval quality on public benchmarks.", no_args_is_help=True)


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

    chosen = Retriever(choice("--retriever", retriever, tuple(Retriever)))
    from ragstream.cli.beir import DatasetError, open_dataset, run_beir  # the slow imports

    try:
        dataset = open_dataset(data, split)
    except DatasetError as exc:
        fail(str(exc))
    settings = settings_from(config)
    with reported():
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
    chosen = Mode(choice("--mode", mode, modes))
    from ragstream.cli.beir import DatasetError, open_dataset  # the slow imports
    from ragstream.cli.multihop import run_multihop

    try:
        dataset = open_dataset(data, "test")
    except DatasetError as exc:
        fail(str(exc))
    settings = settings_from(config, data_dir=index_dir or Path(f"ragstream-eval-{data.name}"))
    with reported():
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

    chosen = SetKind(choice("--set", kind, tuple(SetKind)))
    loaded = [Configuration(path.stem, path, settings_from(path)) for path in configs]
    how = retriever if chosen is SetKind.BEIR else mode
    try:
        check(loaded, chosen, how, recall_k)
        dataset = open_dataset(data, "test")
    except (ValueError, DatasetError) as exc:
        fail(str(exc))
    with reported():
        asyncio.run(run_compare(loaded, chosen, data, dataset, how, index_root, recall_k, as_json))


@eval_app.command("graph")
def eval_graph(
    data: Annotated[
        Path | None,
        typer.Option("--data", help="Folder of the multi-hop sets; adds their 200 labelled names."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    config: ConfigOpt = None,
) -> None:
    """Type accuracy, duplicate pairs left and wrong merges of the offline graph, against
    hand labels of the demo corpus (and of multi-hop passages, with --data)."""
    from ragstream.cli.eval_graph import demo_sample, multihop_sample, run_graph_eval
    from ragstream.cli.graph_labels import LabelError

    if data is not None and not data.is_dir():
        fail(f"--data {data} is not a folder")
    try:
        samples = [demo_sample()] + ([multihop_sample(data)] if data is not None else [])
    except LabelError as exc:
        fail(str(exc))
    settings = settings_from(config)
    with reported():
        asyncio.run(run_graph_eval(settings, samples, as_json))
