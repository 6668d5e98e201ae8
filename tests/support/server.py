"""Runs a real `ragstream serve` process for end-to-end tests."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from ragstream.cli.demo import wait_serving

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServeProcess:
    """`ragstream serve` on a data directory; start/stop/kill like an operator would."""

    def __init__(self, data_dir: Path, env: Mapping[str, str] | None = None) -> None:
        self.data_dir = data_dir
        self.address = f"127.0.0.1:{free_port()}"
        self.log_path = data_dir.parent / f"{data_dir.name}-server.log"
        self._env = {**os.environ, "RAGSTREAM_EMBEDDING__PROVIDER": "hash", **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 60) -> ServeProcess:
        command = [
            sys.executable,
            "-m",
            "ragstream.cli.main",
            "serve",
            "--data-dir",
            str(self.data_dir),
            "--listen",
            self.address,
        ]
        log = self.log_path.open("ab")
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
            raise type(exc)(f"{exc}:\n{self.log()}") from None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:] if self.log_path.exists() else ""

    def kill(self) -> None:
        """SIGKILL: no cleanup, exactly like a crash."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode
