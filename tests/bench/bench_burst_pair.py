"""Two revisions of `ragstream serve` side by side: the CPU a burst of mix queries costs each.

A change to a query's cost is a few percent, and a shared machine's speed drifts by more
than that from one minute to the next. So both servers run at once, each on its own copy of
the same demo index and with its own test server (100 ms embeddings, instant LLM, as in
`bench_burst.py`), and `--rounds` bursts of `--size` queries go to each in turn (the order
flips every round). Printed per side: the server's CPU time per burst (all its threads,
from /proc) and its wall time, then the ratio of this checkout's CPU to the other's, round
by round (mean and median): below 1, this checkout is cheaper.

    git worktree add /tmp/before <revision>
    .venv/bin/python -m tests.bench.bench_burst_pair /tmp/before [--rounds 10] [--size 64]

The other checkout runs from its own sources (PYTHONPATH set to its services) with this
checkout's interpreter and dependencies. A benchmark, run on demand.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.bench.bench_burst import run_burst, sequential_p50_ms, start_llm
from tests.bench.bench_load import llm_env
from tests.bench.bench_query_stages import index_demo
from tests.support.server import ServeProcess, free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Side:
    checkout: Path
    cpu_s: list[float] = field(default_factory=list)
    wall_s: list[float] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        services = sorted(p for p in (self.checkout / "services").iterdir() if p.is_dir())
        return {"PYTHONPATH": ":".join(str(p) for p in services)}


async def serve(data_dir: Path, env: dict[str, str]) -> ServeProcess:
    return await asyncio.to_thread(ServeProcess(data_dir, env).start, 120)


async def bench(args: argparse.Namespace) -> list[Side]:
    sides = [Side(ROOT), Side(args.other.resolve())]
    ports = [free_port(), free_port()]
    urls = [f"http://127.0.0.1:{port}/v1" for port in ports]
    llms = [start_llm(port, args.embed_ms) for port in ports]
    try:
        with tempfile.TemporaryDirectory(prefix="ragstream-burst-pair-") as tmp:
            await index_demo(Path(tmp) / "data0")
            shutil.copytree(Path(tmp) / "data0", Path(tmp) / "data1")
            servers: list[ServeProcess] = []
            try:  # the servers stop before their data directories go
                for n, side in enumerate(sides):
                    env = {**llm_env(urls[n]), **side.env()}
                    servers.append(await serve(Path(tmp) / f"data{n}", env))
                    await sequential_p50_ms(servers[n].address, 10)  # warm-up; p50 to stderr
                for round_ in range(args.rounds):
                    for n in [0, 1] if round_ % 2 == 0 else [1, 0]:
                        await one_burst(servers[n], urls[n], args.size, sides[n])
            finally:
                for server in servers:
                    await asyncio.to_thread(server.stop)
    finally:
        for llm in llms:
            llm.terminate()
            llm.wait(timeout=10)
    return sides


async def one_burst(server: ServeProcess, llm_url: str, size: int, side: Side) -> None:
    assert server.process is not None
    burst = await run_burst(server.address, llm_url, size, 30.0, server.process.pid)
    side.cpu_s.append(burst.server_cpu_s)
    side.wall_s.append(burst.wall_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("other", type=Path, help="a checkout of the other revision")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--size", type=int, default=64, help="queries in a burst")
    parser.add_argument("--embed-ms", type=float, default=100.0, help="embedding latency")
    args = parser.parse_args()
    if not (args.other / "services").is_dir():
        sys.exit(f"{args.other}: not a ragstream checkout (no services/ folder)")
    sides = asyncio.run(bench(args))
    for side in sides:
        print(
            f"{side.checkout}: server CPU per burst mean {statistics.mean(side.cpu_s):.3f} s, "
            f"median {statistics.median(side.cpu_s):.3f} s; wall median "
            f"{statistics.median(side.wall_s):.2f} s"
        )
    ratios = [a / b for a, b in zip(sides[0].cpu_s, sides[1].cpu_s, strict=True) if b > 0]
    print(
        f"CPU ratio, this checkout to the other, per round: mean {statistics.mean(ratios):.3f}, "
        f"median {statistics.median(ratios):.3f} ({len(ratios)} rounds)"
    )


if __name__ == "__main__":
    main()
