"""A real Apache Kafka broker for the integration tests.

The broker is a single KRaft node (broker and controller in one JVM) run from the jars that
`scripts/kafka.sh fetch` keeps in the cache, on free loopback ports, with its data and log in
one work directory. Tests get it through the session-scoped `kafka_broker` fixture.

Policy: integration tests run against a real broker or fail with the reason; they never skip
silently. A developer may set RAGSTREAM_SKIP_INTEGRATION=1 to skip them locally, but not where
CI=true. RAGSTREAM_KAFKA_BOOTSTRAP=host:port uses a broker that is already running instead
(e.g. one from `scripts/kafka.sh start`).

`scripts/kafka.sh start|stop|status` runs the same broker detached (tests/support/kafka_cli.py).
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest

from tests.support.kafka_secured import SecuredListeners

REPO = Path(__file__).resolve().parents[2]
FETCH_SCRIPT = REPO / "scripts" / "kafka.sh"
LOG_CONFIG = REPO / "tools" / "kafka" / "log4j2.properties"
NODE_ID = 1


class KafkaStartError(RuntimeError):
    """The broker could not be fetched or did not come up; the message says why."""


class KafkaEndpoint(Protocol):
    @property
    def bootstrap(self) -> str:
        """`host:port` for bootstrap_servers."""
        ...


@dataclass(frozen=True, slots=True)
class ExternalKafka:
    """A broker that someone else runs (RAGSTREAM_KAFKA_BOOTSTRAP)."""

    bootstrap: str


def fetch_libs() -> Path:
    """The directory of the Kafka jars, downloaded on first use (see scripts/kafka.sh)."""
    done = subprocess.run(
        ["bash", str(FETCH_SCRIPT), "fetch"], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise KafkaStartError(f"scripts/kafka.sh fetch failed:\n{done.stderr.strip()}")
    return Path(done.stdout.strip().splitlines()[-1])


def server_properties(
    *, port: int, controller_port: int, log_dir: Path, num_partitions: int
) -> dict[str, str]:
    """server.properties of a single combined node whose internal topics fit one replica."""
    return {
        "process.roles": "broker,controller",
        "node.id": str(NODE_ID),
        "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(log_dir),
        "num.partitions": str(num_partitions),
        "auto.create.topics.enable": "false",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "3",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "3",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        # Consumer groups of the tests should not wait 3 s for more members to join.
        "group.initial.rebalance.delay.ms": "0",
    }


def render_properties(settings: Mapping[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def new_cluster_id() -> str:
    """A Kafka Uuid in its base64 form; one starting with '-' would read as a CLI option."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not text.startswith("-"):
            return text


def free_ports(count: int) -> list[int]:
    """Loopback ports that were free a moment ago (all held at once, so they differ)."""
    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def java_binary(environ: Mapping[str, str]) -> str:
    home = environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise KafkaStartError("no java found (set JAVA_HOME or put java 17+ on PATH)")
    return java


async def _broker_ids(bootstrap: str) -> list[int]:
    from aiokafka.admin import AIOKafkaAdminClient
    from aiokafka.errors import KafkaError

    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
    try:
        await admin.start()
        cluster = await admin.describe_cluster()
    except (KafkaError, OSError):
        return []
    finally:
        await admin.close()
    return [int(broker["node_id"]) for broker in cluster["brokers"]]


def broker_ids(bootstrap: str) -> list[int]:
    """The brokers that the cluster's metadata lists (none if it does not answer). A broker is
    listed only once the controller has unfenced it, i.e. once it can lead partitions. Runs on
    a thread of its own so that callers inside a running event loop can use it too."""
    result: list[list[int]] = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(_broker_ids(bootstrap))))
    thread.start()
    thread.join()
    return result[0] if result else []


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class KafkaBroker:
    """One broker process; `with KafkaBroker() as broker:` starts it and stops it."""

    def __init__(
        self,
        *,
        libs: Path | None = None,
        workdir: Path | None = None,
        num_partitions: int = 1,
        heap: str = "512m",
        startup_timeout: float = 60.0,
        stop_grace: float = 15.0,
        detach: bool = False,
        secured: bool = True,
    ) -> None:
        """`workdir` is kept after stop() when given (pytest's tmp dirs keep the log for a
        while); otherwise a temporary one is made and removed. `detach` puts the broker in its
        own session so that it outlives this process (scripts/kafka.sh start). `secured` adds
        the SASL_SSL, mutual-TLS and SASL_PLAINTEXT listeners of kafka_secured.py."""
        self._libs = libs
        self._given_workdir = workdir
        self._num_partitions = num_partitions
        self._heap = heap
        self._startup_timeout = startup_timeout
        self._stop_grace = stop_grace
        self._detach = detach
        self._secured = secured
        self.secured: SecuredListeners | None = None
        """The secured listeners, once started with them."""
        self._proc: subprocess.Popen[bytes] | None = None
        self._workdir: Path | None = None
        self._port = 0
        self.startup_seconds = 0.0
        """Seconds from launching the JVM (after formatting storage) until the broker answered."""

    @property
    def bootstrap(self) -> str:
        if self._proc is None:
            raise RuntimeError("the broker is not running")
        return f"127.0.0.1:{self._port}"

    @property
    def pid(self) -> int:
        if self._proc is None:
            raise RuntimeError("the broker is not running")
        return self._proc.pid

    @property
    def log_file(self) -> Path:
        if self._workdir is None:
            raise RuntimeError("the broker was never started")
        return self._workdir / "kafka.log"

    def start(self) -> None:
        libs = self._libs or fetch_libs()
        java = java_binary(os.environ)
        self._workdir = self._given_workdir or Path(tempfile.mkdtemp(prefix="ragstream-kafka-"))
        self._workdir.mkdir(parents=True, exist_ok=True)
        self._port, controller_port, *secured_ports = free_ports(5)
        settings = server_properties(
            port=self._port,
            controller_port=controller_port,
            log_dir=self._workdir / "data",
            num_partitions=self._num_partitions,
        )
        if self._secured:
            self.secured = SecuredListeners.create(self._workdir, *secured_ports)
            settings = self.secured.apply(settings)
        props = self._workdir / "server.properties"
        props.write_text(render_properties(settings))
        # log4j's own shutdown hook would end logging before Kafka's hook logs its shutdown.
        opts = [f"-Dlog4j2.configurationFile={LOG_CONFIG}", "-Dlog4j2.shutdownHookEnabled=false"]
        opts += ["-cp", f"{libs}/*"]
        self._format_storage([java, *opts], props)
        began = time.monotonic()
        with self.log_file.open("ab") as log:
            self._proc = subprocess.Popen(
                [java, f"-Xmx{self._heap}", *opts, "kafka.Kafka", str(props)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=self._detach,
            )
        try:
            self._wait_until_ready(began + self._startup_timeout)
        except KafkaStartError:
            self._terminate()  # the work directory stays: the error names its log
            raise
        self.startup_seconds = time.monotonic() - began

    def _format_storage(self, java: list[str], props: Path) -> None:
        # --standalone makes this node the whole controller quorum (a dynamic quorum of one).
        command = [*java, "kafka.tools.StorageTool", "format", "--standalone"]
        command += ["--cluster-id", new_cluster_id(), "--config", str(props)]
        if self.secured is not None:  # SCRAM users are part of the initial metadata
            command += self.secured.format_arguments()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            output = (done.stdout + done.stderr).strip()
            raise KafkaStartError(f"formatting the KRaft storage failed:\n{output}")

    def _wait_until_ready(self, deadline: float) -> None:
        assert self._proc is not None
        while time.monotonic() < deadline:
            code = self._proc.poll()
            if code is not None:
                raise KafkaStartError(f"the broker exited with code {code}\n{self._log_tail()}")
            if port_open(self._port) and NODE_ID in broker_ids(self.bootstrap):
                return
            time.sleep(0.25)
        raise KafkaStartError(
            f"the broker did not answer within {self._startup_timeout:.0f} s\n{self._log_tail()}"
        )

    def _log_tail(self, lines: int = 40) -> str:
        text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        tail = "\n".join(text.splitlines()[-lines:])
        return f"last lines of {self.log_file}:\n{tail}"

    def stop(self) -> None:
        self._terminate()
        if self._given_workdir is None and self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)

    def _terminate(self) -> None:
        """SIGTERM (a controlled shutdown), then SIGKILL after the grace period."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(self._stop_grace)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def skip_requested(environ: Mapping[str, str]) -> bool:
    """Whether to skip integration tests; raises where a skip is not allowed (CI=true)."""
    if environ.get("RAGSTREAM_SKIP_INTEGRATION", "") not in ("", "0"):
        if environ.get("CI") == "true":
            raise KafkaStartError("RAGSTREAM_SKIP_INTEGRATION is set but CI=true: CI must run them")
        return True
    return False


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaEndpoint]:
    """The session's Kafka broker; tests share it, so each should use topic and group names
    of its own (e.g. with a uuid4 in them)."""
    external = os.environ.get("RAGSTREAM_KAFKA_BOOTSTRAP", "")
    broker = KafkaBroker(workdir=tmp_path_factory.mktemp("kafka"))
    problem = ""
    try:
        if skip_requested(os.environ):
            pytest.skip("RAGSTREAM_SKIP_INTEGRATION is set")
        if not external:
            broker.start()
        elif not broker_ids(external):
            raise KafkaStartError(f"RAGSTREAM_KAFKA_BOOTSTRAP={external} does not answer")
    except KafkaStartError as error:
        problem = str(error)
    if problem:  # outside the except block: the reason alone, without a chained traceback
        pytest.fail(f"no Kafka broker for the integration tests: {problem}", pytrace=False)
    try:
        yield ExternalKafka(external) if external else broker
    finally:
        broker.stop()
