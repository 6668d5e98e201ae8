"""Runs real `ragstream` processes (`serve`, `indexer`) for end-to-end and integration tests.

`RagstreamProcess` is any `ragstream` command that listens on a loopback address; started
means grpc.health.v1 on that address reports SERVING. `ServeProcess` is `ragstream serve`
on a data directory, the embedded deployment most tests use.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from ragstream.cli.demo import wait_serving

REPO = Path(__file__).resolve().parents[2]


def openai_embedding_env(
    base_url: str, api_key: str = "test-key", dimensions: int = 64
) -> dict[str, str]:
    """Settings that make a server embed through an OpenAI-compatible test server."""
    return {
        "RAGSTREAM_EMBEDDING__PROVIDER": "openai",
        "RAGSTREAM_EMBEDDING__MODEL": "test-embedding",
        "RAGSTREAM_EMBEDDING__BASE_URL": base_url,
        "RAGSTREAM_EMBEDDING__API_KEY": api_key,
        "RAGSTREAM_EMBEDDING__DIMENSIONS": str(dimensions),
    }


def indexer_members(pid: int | str = "self") -> list[int]:
    """The live children of a process that run an indexer member (indexer/members.py)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # the task or the child ended meanwhile
            for child in (task / "children").read_text().split():
                if b"ragstream.indexer.members" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
    return found


def running(pid: int) -> bool:
    """Whether the process exists and is no zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RagstreamProcess:
    """`ragstream ARGS... ADDRESS`; start, kill -9 or SIGTERM it like an operator would.

    The last argument given is the option that takes the address (`--listen`,
    `--health-listen`); the process's output goes to `log_path`.
    """

    def __init__(self, env: Mapping[str, str], log_path: Path, *args: str) -> None:
        self.address = f"127.0.0.1:{free_port()}"
        self.log_path = log_path
        self._args = [*args, self.address]
        self._env = dict(env)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60) -> RagstreamProcess:
        command = [sys.executable, "-m", "ragstream.cli.main", *self._args]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=self._env
            )
        asyncio.run(self._wait_serving(timeout_s))
        return self

    async def _wait_serving(self, timeout_s: float) -> None:
        assert self.process is not None
        try:
            await wait_serving(self.address, self.process, timeout_s)
        except (RuntimeError, TimeoutError) as exc:
            raise type(exc)(f"{exc}:\n{self.log()[-6000:]}") from None

    def __enter__(self) -> RagstreamProcess:
        return self.start()

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        if exc_type is not None:  # the test failed: show what the process said meanwhile
            print(f"--- {self.log_path.name}, its last lines:", *self.own_lines()[-80:], sep="\n")
        self.stop()

    def own_lines(self) -> list[str]:
        """The log lines of ragstream's own loggers (the Kafka client's chatter left out)."""
        return [line for line in self.log().splitlines() if " ragstream" in line or "Trace" in line]

    def exited(self) -> bool:
        return self.process is None or self.process.poll() is not None

    def log(self) -> str:
        """Everything the process wrote so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL: no cleanup, no commit, no leaving a group, exactly like a crash."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def terminate(self, timeout_s: float = 30) -> tuple[int, float]:
        """SIGTERM; the exit code and the seconds it took to exit."""
        assert self.process is not None
        began = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        return code, time.monotonic() - began

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after 30 s; the exit code (test cleanup)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):  # killed by terminate()
                self.terminate()
        return self.process.returncode


class ServeProcess(RagstreamProcess):
    """`ragstream serve` on a data directory, with the hashed embedder unless `env` says
    otherwise."""

    def __init__(
        self, data_dir: Path, env: Mapping[str, str] | None = None, http: bool = False
    ) -> None:
        self.data_dir = data_dir
        self.http_address = f"127.0.0.1:{free_port()}" if http else None
        """host:port of the HTTP/JSON port and console (`--http-listen`), when asked for."""
        environment = {**os.environ, "RAGSTREAM_EMBEDDING__PROVIDER": "hash", **(env or {})}
        log_path = data_dir.parent / f"{data_dir.name}-server.log"
        options = ["--data-dir", str(data_dir)]
        if self.http_address is not None:
            options += ["--http-listen", self.http_address]
        super().__init__(environment, log_path, "serve", *options, "--listen")

    def start(self, timeout_s: float = 60) -> ServeProcess:
        super().start(timeout_s)
        return self

    def __enter__(self) -> ServeProcess:
        return self.start()


def ragstream_cli(
    server: RagstreamProcess, *args: str, columns: int = 200, timeout_s: float = 120
) -> subprocess.CompletedProcess[str]:
    """`ragstream ARGS... --server ADDRESS` as a user runs it, its output piped (as a script
    would read it), in a console `columns` wide."""
    return subprocess.run(
        [sys.executable, "-m", "ragstream.cli.main", *args, "--server", server.address],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        env={**os.environ, "COLUMNS": str(columns)},
    )
