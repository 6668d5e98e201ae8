"""Runs a real `ragstream serve` process for end-to-end tests."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

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
        deadline = time.monotonic() + timeout_s
        async with grpc.aio.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited early:\n{self.log()}")
                try:
                    reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.aio.AioRpcError:
                    await asyncio.sleep(0.2)
        raise TimeoutError(f"server not serving after {timeout_s} s:\n{self.log()}")

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
