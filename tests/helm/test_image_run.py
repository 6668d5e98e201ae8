"""The container image built from the Dockerfile and run as the chart runs it.

scripts/image.sh builds the image with buildah (no Docker engine), once per tree: its tag is a
hash of the build's inputs, so an unchanged tree reuses it. Each command then runs in a fresh
container of it (tests/helm/container.py) with what the chart's pods get: the chart's command,
arguments, environment (its ConfigMap), user, read-only root filesystem with a /tmp of its own,
and termination grace period, read from `helm template`. The chart's Kafka, Elasticsearch and
NebulaGraph settings are swapped for the embedded backends (the only change), the 0.0.0.0
ports for free loopback ones. The embedded data directory is a host folder mounted at /data
where two containers share it. The image's own CLI publishes and asks, from containers too.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragstream.cli import demo_data
from ragstream.cli.demo import wait_serving
from tests.helm.chart import Helm, Manifest, container_env, deployment, write_values
from tests.helm.container import Container, Image, ImageError, Mount, Process, build_image
from tests.support.server import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]
DEMO = demo_data.HERE  # corpus/ and questions.json
EMBEDDED = {
    "RAGSTREAM_BUS__BACKEND": "sqlite",
    "RAGSTREAM_STORAGE__SEARCH": "sqlite",
    "RAGSTREAM_STORAGE__GRAPH": "sqlite",
}
VALUES = {"auth": {"enabled": False}, "query": {"http": {"enabled": True}}}
QUESTION = "When and where was the Skua 3 launched?"
ANSWERING_DOCUMENT = "2025-skua-3-launch.md"
# Where the whole corpus is not the point, three documents keep the run short.
FEW_DOCUMENTS = (ANSWERING_DOCUMENT, "company-overview.md", "leadership-team.md")
COMPILERS = ("gcc", "cc", "c++", "g++", "clang", "tcc", "x86_64-linux-gnu-gcc")


@pytest.fixture(scope="module")
def image() -> Image:
    """Fails (never skips) in CI; elsewhere skips only when buildah cannot be installed."""
    try:
        return build_image()
    except (ImageError, subprocess.TimeoutExpired) as error:
        if os.environ.get("CI") != "true" and shutil.which("buildah") is None:
            pytest.skip(f"buildah is not installed and could not be (needs root): {error}")
        pytest.fail(f"the image could not be built: {error}")


@pytest.fixture(scope="module")
def chart(helm: Helm, values_dir: Path) -> list[Manifest]:
    return helm.template(write_values(values_dir, "image-run", VALUES))


class Pod:
    """One component's pod as the chart renders it, with its ports moved to loopback."""

    def __init__(self, manifests: list[Manifest], component: str) -> None:
        spec = deployment(manifests, component)["spec"]["template"]["spec"]
        (self.container,) = spec["containers"]
        self.grace_s = float(spec["terminationGracePeriodSeconds"])
        self.env = {**container_env(manifests, component), **EMBEDDED}
        self.ports = {p["containerPort"]: free_port() for p in self.container["ports"]}
        self.args = [
            re.sub(r"^0\.0\.0\.0:(\d+)$", self._loopback, a) for a in self.container["args"]
        ]

    def _loopback(self, match: re.Match[str]) -> str:
        return f"127.0.0.1:{self.ports[int(match.group(1))]}"

    def address(self, port_name: str) -> str:
        (port,) = [p for p in self.container["ports"] if p["name"] == port_name]
        return f"127.0.0.1:{self.ports[port['containerPort']]}"

    @property
    def probe_address(self) -> str:
        return f"127.0.0.1:{self.ports[self.container['startupProbe']['grpc']['port']]}"

    @property
    def startup_budget_s(self) -> float:
        probe = self.container["startupProbe"]
        return float(probe["periodSeconds"] * probe["failureThreshold"])

    def start(self, box: Container, log: Path, args: list[str] | None = None) -> Process:
        """The chart's command and arguments (or `args`), healthy on the probed port."""
        process = box.start([*self.container["command"], *(args or self.args)], log, self.env)
        try:
            asyncio.run(wait_serving(self.probe_address, process.popen, self.startup_budget_s))
        except (RuntimeError, TimeoutError) as error:
            process.kill()
            raise AssertionError(f"{error}:\n{process.log()[-6000:]}") from None
        return process

    def stop(self, process: Process) -> None:
        code, seconds = process.terminate(self.grace_s)
        assert code == 0, process.log()[-4000:]
        assert seconds < self.grace_s


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A folder the image's user owns (the chart's fsGroup), mounted at /data."""
    path = tmp_path / "data"
    path.mkdir()
    os.chown(path, 10001, 10001)
    return path


@pytest.fixture
def few_documents(tmp_path: Path) -> Path:
    path = tmp_path / "few"
    path.mkdir()
    for name in FEW_DOCUMENTS:
        shutil.copy(DEMO / "corpus" / name, path / name)
    return path


@pytest.fixture
def client(image: Image, few_documents: Path) -> Iterator[Container]:
    """A container whose `ragstream` publishes documents and asks questions: the demo
    corpus at /demo/corpus, three of its documents at /few."""
    with Container(image, [Mount(DEMO, "/demo"), Mount(few_documents, "/few")]) as box:
        yield box


def cli(box: Container, *args: str) -> str:
    done = box.run(["ragstream", *args], timeout_s=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def publish_and_ask(box: Container, server: str, corpus: str = "/demo/corpus") -> None:
    cli(box, "ingest", corpus, "--wait", "--server", server)
    answer: dict[str, Any] = json.loads(
        cli(box, "query", QUESTION, "--json", "--mode", "mix", "--server", server)
    )
    cited = {Path(r["filePath"]).name for r in answer["references"]}
    assert ANSWERING_DOCUMENT in cited, answer
    # The extractive answer quotes the launch sentence, which says where (its date is in the
    # dateline before it, which shares no word with the question).
    assert "Skua 3" in answer["answer"] and "Bergen" in answer["answer"], answer


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        assert response.status == 200
        return str(response.read().decode())


def test_the_container_is_what_the_chart_asks_for(image: Image, chart: list[Manifest]) -> None:
    for component in ("query", "indexer"):
        pod = Pod(chart, component)
        security = pod.container["securityContext"]
        assert security["readOnlyRootFilesystem"] is True
        assert image.config["User"] == f"{security['runAsUser']}:{security['runAsGroup']}"
        assert image.config["Entrypoint"] == pod.container["command"]
        assert [m["mountPath"] for m in pod.container["volumeMounts"]] == ["/tmp"]
        assert (
            f"{pod.container['startupProbe']['grpc']['port']}/tcp" in image.config["ExposedPorts"]
        )
    with Container(image) as box:
        who = box.run(["sh", "-c", "id -u; id -g; touch /opt/x 2>&1; touch /tmp/x && echo tmp"])
        assert who.stdout.splitlines() == [
            "10001",
            "10001",
            "touch: cannot touch '/opt/x': Read-only file system",
            "tmp",
        ], who.stderr
        path = image.env["PATH"].split(":")
        found = [f"{d}/{c}" for d in path for c in COMPILERS if (box.rootfs / d[1:] / c).exists()]
        assert not found, f"the image holds a compiler: {found}"


def test_serve_with_the_charts_arguments(
    image: Image, chart: list[Manifest], client: Container, tmp_path: Path
) -> None:
    """The query pod's arguments less --no-indexer: the embedded deployment in one process."""
    pod = Pod(chart, "query")
    assert pod.container["args"][:2] == ["serve", "--no-indexer"]
    args = [a for a in pod.args if a != "--no-indexer"]
    with Container(image) as box:
        process = pod.start(box, tmp_path / "serve.log", args)
        cold_start_s = time.monotonic() - process.started
        try:
            assert cold_start_s < pod.startup_budget_s
            publish_and_ask(client, pod.address("grpc"))
            page = get(f"http://{pod.address('http')}/")
            assert "<title>" in page and "ragstream" in page.lower()
            scripts = re.findall(r'<script[^>]+src="/?([^"]+)"', page)
            assert scripts, page
            for script in scripts:
                assert get(f"http://{pod.address('http')}/{script}")
            pod.stop(process)
        finally:
            process.kill()
    print(f"cold start (process start to SERVING): {cold_start_s:.1f} s")


def test_the_indexer_and_the_query_service_apart_on_the_embedded_bus(
    image: Image, chart: list[Manifest], client: Container, data_dir: Path, tmp_path: Path
) -> None:
    """The two Deployments' exact commands, sharing one data directory as their bus."""
    indexer, query = Pod(chart, "indexer"), Pod(chart, "query")
    shared = {"RAGSTREAM_DATA_DIR": "/data"}
    indexer.env.update(shared)
    query.env.update(shared)
    data = [Mount(data_dir, "/data", writable=True)]
    with Container(image, data) as indexer_box, Container(image, data) as query_box:
        indexing = indexer.start(indexer_box, tmp_path / "indexer.log")
        serving = query.start(query_box, tmp_path / "query.log")
        try:
            publish_and_ask(client, query.address("grpc"), "/few")
            query.stop(serving)
            indexer.stop(indexing)
        finally:
            serving.kill()
            indexing.kill()


def test_the_demo_answers_with_no_network(
    image: Image, few_documents: Path, tmp_path: Path
) -> None:
    """`ragstream demo` in a network namespace with only loopback: no download at run time."""
    questions = tmp_path / "questions"
    questions.mkdir()
    (questions / "questions.json").write_text(json.dumps([{"question": QUESTION, "mode": "mix"}]))
    mounts = [Mount(few_documents, "/corpus"), Mount(questions, "/questions")]
    demo = ["ragstream", "demo", "--corpus", "/corpus", "--questions", "/questions/questions.json"]
    with Container(image, mounts, offline=True) as box:
        done = box.run(demo, env={"COLUMNS": "200"}, timeout_s=900)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert f"indexed {len(FEW_DOCUMENTS)} documents" in output
    assert "embedding=minilm:" in output
    assert ANSWERING_DOCUMENT in output
    assert "done: server stopped" in output
