"""`ragstream demo`: a real server on a temporary directory, the corpus in, five answers out.

The corpus and questions default to the packaged ones (ragstream/cli/demo_data), so the demo
runs from any folder after `pip install .`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rich.console import Console
from rich.markup import escape
from rich.rule import Rule

from ragstream.cli.client import Client
from ragstream.cli.commands import _MODES, print_answer
from ragstream.cli.files import read_all
from ragstream.cli.report import err, print_skipped
from ragstream.v1 import query_pb2

out = Console()
WORKSPACE = "demo"
QUESTIONS_ASKED = 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(data_dir: Path, address: str, log_path: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "ragstream.cli.main", "serve", "--data-dir", str(data_dir)]
    with log_path.open("wb") as log:
        return subprocess.Popen(
            [*command, "--listen", address], stdout=log, stderr=subprocess.STDOUT, env=os.environ
        )


async def wait_serving(address: str, server: subprocess.Popen[bytes], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    async with grpc.aio.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError(f"server exited with code {server.returncode}")
            try:
                reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.aio.AioRpcError:
                pass
            await asyncio.sleep(0.2)
    raise TimeoutError(f"server at {address} not serving after {timeout_s:.0f} s")


async def ingest_and_ask(address: str, corpus: Path, questions: list[dict[str, str]]) -> None:
    documents, errors = read_all([corpus])
    print_skipped(errors)
    async with Client(address) as client:
        started = time.monotonic()
        published = (await client.publish(WORKSPACE, documents)).results
        out.print(f"published {len(published)} documents through the event log")
        statuses = await client.wait_until_done(WORKSPACE, published, timeout_s=240)
        chunks = sum(s.chunk_count for s in statuses)
        out.print(
            f"indexed {len(statuses)} documents ({chunks} chunks) "
            f"in {time.monotonic() - started:.1f} s; building the knowledge graph"
        )
        await client.wait_until_current(WORKSPACE, timeout_s=240)
        entities = sum(s.entity_count for s in statuses)
        relations = sum(s.relation_count for s in statuses)
        out.print(
            f"knowledge graph built ({entities} entity and {relations} relation mentions) "
            f"after {time.monotonic() - started:.1f} s"
        )
        for number, item in enumerate(questions[:QUESTIONS_ASKED], start=1):
            out.print(Rule(f"Question {number} ({item['mode']})"))
            out.print(f"[bold]{item['question']}[/bold]")
            response = await client.ask(
                query_pb2.QueryRequest(
                    workspace=WORKSPACE,
                    query=item["question"],
                    params=query_pb2.QueryParams(mode=_MODES[item["mode"]], chunk_top_k=5),
                )
            )
            print_answer(response)


def load_questions(path: Path) -> list[dict[str, str]]:
    """The questions file's entries; ValueError saying what is wrong with it."""
    try:
        questions = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the questions file {path}: {exc}") from exc
    wanted = {"question", "mode"}
    if not isinstance(questions, list) or not all(
        isinstance(item, dict) and wanted <= item.keys() and item["mode"] in _MODES
        for item in questions
    ):
        raise ValueError(
            f"{path}: must be a JSON list of objects with a question and a mode "
            f"({', '.join(m for m in _MODES if m)})"
        )
    return questions


def run_demo(corpus: Path, questions_file: Path) -> int:
    """Exit code 0 when the demo ran to its end, 1 when it failed, 2 on bad arguments."""
    if not corpus.is_dir():
        err.print(f"[red]error[/red]: the corpus {escape(str(corpus))} is not a folder")
        return 2
    try:
        questions = load_questions(questions_file)
    except ValueError as exc:
        err.print(f"[red]error[/red]: {escape(str(exc))}")
        return 2
    with tempfile.TemporaryDirectory(prefix="ragstream-demo-") as tmp:
        address = f"127.0.0.1:{free_port()}"
        log_path = Path(tmp) / "server.log"
        server = start_server(Path(tmp) / "data", address, log_path)
        out.print(f"started ragstream serve on {address} (data in {tmp})")
        try:
            asyncio.run(wait_serving(address, server, timeout_s=120))
            asyncio.run(ingest_and_ask(address, corpus, questions))
        except (RuntimeError, TimeoutError, grpc.aio.AioRpcError) as exc:
            out.print(f"[red]demo failed:[/red] {exc}")
            out.print(log_path.read_text(errors="replace")[-4000:])
            return 1
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        out.print(Rule("done: server stopped"))
    return 0
