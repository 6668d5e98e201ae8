"""Load test of `ragstream serve`: deadline-aware admission under 200 concurrent clients.

A real `ragstream serve` answers with the OpenAI-compatible test server (its own process) as
LLM and embedding provider, every chat answer taking `--llm-ms` there. The demo corpus is
indexed first (with the offline extractor, so the test LLM's echo replies do not matter),
then two phases of `--duration` seconds each run Query calls in closed loops, `--clients`
clients with one channel (one connection) each, on the server's default admission settings
(unless `--concurrency` / `--queue` are given):

- patient: every call has a `--patient-s` (60 s) deadline: the reference count of answers;
- hurried: every call has a `--hurried-s` (2 s) deadline. The server must answer at least
  80% as many calls as in the patient phase, let at most 5% of the attempts run into
  DEADLINE_EXCEEDED, and refuse the rest at once with RESOURCE_EXHAUSTED carrying a
  google.rpc.RetryInfo hint, which the client honours before its next call.

With `--cpu-hogs N`, N processes spin beside the server through both phases (each a busy
loop at the server's own priority), so the server gets a fraction of the CPU its load
average promises: the rules above must hold under that starvation too.

A client retries at once after DEADLINE_EXCEEDED, as a naive client would. Reports per
phase: attempts, answers, refusals (and refusals without a hint), other errors by code,
throughput, p50/p99 latency of the answered calls and p99 of the refusals. Loopback only;
bounded by the durations.

    .venv/bin/python -m tests.bench.bench_load [--duration 60] [--clients 200] [--cpu-hogs 2]

Exits with status 1 when the hurried phase breaks a rule.

At 8252ad9, `--duration 60`, one 2-core machine: without hogs the patient phase answered
2,344 calls (36.0/s, p50 5.1 s) and the hurried one 1,190 (51%; 92 of 3,981 attempts, 2.3%,
ran out of time; answered p50 0.93 s); with `--cpu-hogs 2`, 2,346 and 1,078 (46%; 316 of
4,421, 7.1%, ran out). Both phases are bounded by the LLM client's `llm.concurrency` (8
calls in flight at 200 ms: 40 calls a second), not by the CPU: the hogs leave the patient
phase's rate as it was. The hurried phase uses half of that rate: admission's margin
refuses calls that would have finished (its answers take 0.93 s p50 of their 2 s). With
`RAGSTREAM_LLM__CONCURRENCY=32` in the bench's environment (`--duration 20`): patient 141.6
answers a second, hurried 152.6 (108%), none out of time, 34 of 3,281 refused.

Admission now sees the LLM client's queue (common/providers/backlog.py): calls waiting for
one of its `llm.concurrency` slots mark the family saturated, so it predicts from the pace
at which calls finish, and their wait counts as backlog, not as service (before, the patient
phase left a learned service time of 5.1 s, and the hurried phase began by refusing every
call). `--duration 60` on the default settings: without hogs patient 2,338 answers (35.9/s)
and hurried 2,400 (103%; 84 of 4,126 attempts, 2.0%, ran out of time; answered p50 1.83
s); with `--cpu-hogs 2`, 2,327 and 2,304 (99%; 65 of 4,148, 1.6%). The code before it, in
the same session with `--duration 20`: hurried 12.1 answers a second against 32.1 patient
(38%), 86 of 1,693 attempts (5.1%) out of time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from ragstream.cli.client import Client
from ragstream.cli.demo_data import CORPUS
from ragstream.cli.demo_data import QUESTIONS as QUESTIONS_FILE
from ragstream.cli.files import read_all
from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.support.server import ServeProcess, free_port

QUESTIONS = json.loads(QUESTIONS_FILE.read_text())
WORKSPACE = "load"
MIN_SHARE_ANSWERED = 0.8
MAX_SHARE_EXPIRED = 0.05


@dataclass
class Phase:
    name: str
    clients: int
    deadline_s: float
    latencies: list[float] = field(default_factory=list)
    refusals: list[float] = field(default_factory=list)
    hintless: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    @property
    def attempts(self) -> int:
        return len(self.latencies) + len(self.refusals) + sum(self.errors.values())

    def summary(self) -> dict[str, object]:
        ok = sorted(self.latencies)
        refused = sorted(self.refusals)
        return {
            "phase": self.name,
            "clients": self.clients,
            "deadline_s": self.deadline_s,
            "attempts": self.attempts,
            "answered": len(ok),
            "refused": len(refused),
            "refused_without_hint": self.hintless,
            "errors": dict(self.errors),
            "throughput_per_s": round(len(ok) / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(percentile(ok, 50) * 1000, 1),
            "p99_ms": round(percentile(ok, 99) * 1000, 1),
            "refusal_p99_ms": round(percentile(refused, 99) * 1000, 1),
        }


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(pct) - 1]


def retry_delay(error: grpc.aio.AioRpcError) -> float | None:
    """The RetryInfo delay of a refusal in seconds; None when it carries none."""
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    info = error_details_pb2.RetryInfo()
    if status is not None and status.details and status.details[0].Unpack(info):
        return float(info.retry_delay.ToMilliseconds()) / 1000
    return None


async def client_loop(address: str, number: int, phase: Phase, stop_at: float) -> None:
    """One client: one connection, one call at a time, until the phase ends."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = query_pb2_grpc.QueryServiceStub(channel)
        turn = number
        while time.monotonic() < stop_at:
            item = QUESTIONS[turn % len(QUESTIONS)]
            turn += 1
            request = query_pb2.QueryRequest(workspace=WORKSPACE, query=item["question"])
            started = time.monotonic()
            try:
                await stub.Query(request, timeout=phase.deadline_s)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    phase.errors[error.code().name] += 1
                    continue
                phase.refusals.append(time.monotonic() - started)
                delay = retry_delay(error)
                phase.hintless += delay is None
                await asyncio.sleep(0.1 if delay is None else delay)
                continue
            phase.latencies.append(time.monotonic() - started)


async def run_phase(address: str, phase: Phase, duration_s: float) -> Phase:
    started = time.monotonic()
    stop_at = started + duration_s
    async with asyncio.TaskGroup() as group:
        for number in range(phase.clients):
            group.create_task(client_loop(address, number, phase, stop_at))
    phase.seconds = time.monotonic() - started
    return phase


async def index_corpus(address: str) -> None:
    documents, _ = read_all([CORPUS])
    async with Client(address) as client:
        published = (await client.publish(WORKSPACE, documents)).results
        await client.wait_until_done(WORKSPACE, published, timeout_s=600)
        await client.wait_until_current(WORKSPACE, timeout_s=600)


def provider_env(llm_url: str) -> dict[str, str]:
    return {
        "RAGSTREAM_EMBEDDING__PROVIDER": "openai",
        "RAGSTREAM_EMBEDDING__MODEL": "test-embedding",
        "RAGSTREAM_EMBEDDING__BASE_URL": llm_url,
        "RAGSTREAM_EMBEDDING__API_KEY": "bench",
        "RAGSTREAM_EMBEDDING__DIMENSIONS": "64",
        "RAGSTREAM_LOG_LEVEL": "WARNING",
    }


def llm_env(llm_url: str) -> dict[str, str]:
    """Embeddings and the LLM from the test server."""
    return {
        **provider_env(llm_url),
        "RAGSTREAM_LLM__PROVIDER": "openai",
        "RAGSTREAM_LLM__MODEL": "test-chat",
        "RAGSTREAM_LLM__BASE_URL": llm_url,
        "RAGSTREAM_LLM__API_KEY": "bench",
    }


def serve_env(args: argparse.Namespace, llm_url: str) -> dict[str, str]:
    env = llm_env(llm_url)
    if args.concurrency:
        env["RAGSTREAM_SERVER__MAX_CONCURRENT_QUERIES"] = str(args.concurrency)
    if args.queue is not None:
        env["RAGSTREAM_SERVER__MAX_QUEUED_QUERIES"] = str(args.queue)
    return env


def start_llm(args: argparse.Namespace, port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "ragstream.testing.openai_server", "--port", str(port),
        "--chat-latency-ms", str(args.llm_ms), "--embed-latency-ms", str(args.embed_ms),
        "--dimensions", "64",
    ]  # fmt: skip
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, env=os.environ)


def start_hog() -> subprocess.Popen[bytes]:
    """A process that keeps one core busy until killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def run_serve(data_dir: Path, env: Mapping[str, str]) -> ServeProcess:
    return ServeProcess(data_dir, env).start(timeout_s=120)


async def bench(args: argparse.Namespace) -> list[Phase]:
    port = free_port()
    llm = start_llm(args, port)
    llm_url = f"http://127.0.0.1:{port}/v1"
    try:
        with tempfile.TemporaryDirectory(prefix="ragstream-load-") as tmp:
            data_dir = Path(tmp) / "data"
            indexer = await asyncio.to_thread(run_serve, data_dir, provider_env(llm_url))
            try:
                await index_corpus(indexer.address)
            finally:
                await asyncio.to_thread(indexer.stop)
            server = await asyncio.to_thread(run_serve, data_dir, serve_env(args, llm_url))
            hogs = [start_hog() for _ in range(args.cpu_hogs)]
            try:
                patient = Phase("patient", args.clients, args.patient_s)
                hurried = Phase("hurried", args.clients, args.hurried_s)
                for phase in (patient, hurried):
                    await run_phase(server.address, phase, args.duration)
            finally:
                for hog in hogs:
                    hog.kill()
                    hog.wait()
                await asyncio.to_thread(server.stop)
    finally:
        llm.terminate()
        llm.wait(timeout=10)
    return [patient, hurried]


def verdicts(patient: Phase, hurried: Phase) -> list[str]:
    broken = []
    wanted = MIN_SHARE_ANSWERED * len(patient.latencies)
    if len(hurried.latencies) < wanted:
        broken.append(f"hurried answered {len(hurried.latencies)}, fewer than {wanted:.0f}")
    expired = hurried.errors["DEADLINE_EXCEEDED"]
    if expired > MAX_SHARE_EXPIRED * hurried.attempts:
        broken.append(f"{expired} of {hurried.attempts} hurried attempts ran out of time")
    others = {code: n for code, n in hurried.errors.items() if code != "DEADLINE_EXCEEDED"}
    if others or hurried.hintless:
        broken.append(f"hurried: errors {others}, {hurried.hintless} refusals without a hint")
    return broken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds per phase")
    parser.add_argument("--clients", type=int, default=200, help="concurrent clients")
    parser.add_argument("--patient-s", type=float, default=60.0, help="patient deadline")
    parser.add_argument("--hurried-s", type=float, default=2.0, help="hurried deadline")
    parser.add_argument("--concurrency", type=int, default=0, help="0: the server default")
    parser.add_argument("--queue", type=int, default=None, help="queries allowed to wait")
    parser.add_argument("--llm-ms", type=float, default=200.0, help="chat latency")
    parser.add_argument("--embed-ms", type=float, default=5.0, help="embedding latency")
    parser.add_argument("--cpu-hogs", type=int, default=0, help="busy processes beside it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    patient, hurried = asyncio.run(bench(args))
    summaries = [patient.summary(), hurried.summary()]
    if args.json:
        print(json.dumps(summaries, indent=2))
    else:
        concurrency = args.concurrency or "the server default"
        print(
            f"{args.clients} clients; LLM {args.llm_ms} ms; concurrency {concurrency}; "
            f"{args.cpu_hogs} CPU hogs"
        )
        for summary in summaries:
            print(line(summary))
    return exit_status(verdicts(patient, hurried))


def line(summary: Mapping[str, object]) -> str:
    return "  ".join(f"{key}={value}" for key, value in summary.items())


def exit_status(broken: Sequence[str]) -> int:
    """Prints each broken rule; 1 when there is one."""
    for problem in broken:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
