"""A real single-node Elasticsearch for the integration tests.

`scripts/elasticsearch.sh` does the work (fetch the distribution with Maven into the cache, start
the node on free loopback ports as a non-root user, wait for yellow health, stop it); this module
runs that script and hands the node's URL to the tests through the session-scoped
`elasticsearch_node` fixture.

Policy: integration tests run against a real node or fail with the reason; they never skip
silently. A developer may set RAGSTREAM_SKIP_INTEGRATION=1 to skip them locally, but not where
CI=true. RAGSTREAM_ES_URL=http://host:port uses a node that is already running instead (e.g. one
from `scripts/elasticsearch.sh start`).

What the distribution lacks (it is the integration-test zip: server plus x-pack-core/-security
and netty only): the `english`/`pattern`/`snowball` analyzers and stemming filters
(analysis-common), painless scripts, the `rrf` retriever, and `GET /` (so the client's `info()`
and `ping()` do not work; use `cluster.health()`). dense_vector with int8_hnsw, kNN with filters,
BM25 with the `standard` analyzer all work.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from pathlib import Path

import pytest
from elasticsearch import AsyncElasticsearch

from ragstream.common.storage.elastic.layout import IndexLayout

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "elasticsearch.sh"
# Covers the first run's download (~110 MB through Maven) plus the script's 120 s health wait.
START_BUDGET_SECONDS = 600.0
STOP_BUDGET_SECONDS = 60.0


class ElasticsearchStartError(RuntimeError):
    """The node could not be fetched, started or reached; the message says why."""


class ElasticsearchNode:
    """One node: `with ElasticsearchNode() as node: ... node.url`.

    With `external_url` nothing is started: start() only checks that the node answers.
    """

    def __init__(self, *, external_url: str | None = None, script: Path = SCRIPT) -> None:
        self._external_url = external_url.rstrip("/") if external_url else None
        self._script = script
        self._run_dir: Path | None = None
        self._url: str | None = None
        self.startup_seconds = 0.0
        """Seconds that start() took (fetching included on the first run)."""

    @property
    def url(self) -> str:
        if self._url is None:
            raise RuntimeError("the Elasticsearch node is not running")
        return self._url

    @property
    def run_dir(self) -> Path | None:
        """Config, data and logs of a node this object started (None for an external one)."""
        return self._run_dir

    def start(self) -> None:
        began = time.monotonic()
        if self._external_url is not None:
            check_health(self._external_url)
            self._url = self._external_url
            return
        # Not pytest's tmp_path: its parents are private to root, and as root the node runs as
        # another user that must reach this directory (the script hands it over).
        self._run_dir = Path(tempfile.mkdtemp(prefix="ragstream-es-"))
        # The owner pid lets the script stop the node if this process dies without stop().
        done = self._run_script("start", START_BUDGET_SECONDS, RAGSTREAM_ES_OWNER_PID=os.getpid())
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            raise ElasticsearchStartError(
                f"scripts/elasticsearch.sh start failed (exit {done.returncode}); "
                f"files kept in {self._run_dir}:\n{done.stderr.strip()}"
            )
        self._url = lines[-1]
        self.startup_seconds = time.monotonic() - began

    def stop(self) -> None:
        """SIGTERM to the node's process group, SIGKILL after a grace (see the script)."""
        self._url = None
        run_dir, self._run_dir = self._run_dir, None
        if run_dir is None:
            return
        done = self._run_script("stop", STOP_BUDGET_SECONDS, run_dir=run_dir)
        if done.returncode != 0:
            raise RuntimeError(f"scripts/elasticsearch.sh stop failed:\n{done.stderr.strip()}")
        shutil.rmtree(run_dir)

    def _run_script(
        self, command: str, timeout: float, *, run_dir: Path | None = None, **env: object
    ) -> subprocess.CompletedProcess[str]:
        target = run_dir or self._run_dir
        assert target is not None
        environ = os.environ | {key: str(value) for key, value in env.items()}
        try:
            return subprocess.run(
                ["bash", str(self._script), command, str(target)],
                capture_output=True,
                text=True,
                env=environ,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise ElasticsearchStartError(
                f"scripts/elasticsearch.sh {command} took longer than {timeout:.0f} s"
            ) from error

    def __enter__(self) -> ElasticsearchNode:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def check_health(url: str, timeout: float = 10.0) -> None:
    """Raises unless the node at `url` answers cluster health with yellow or green."""
    request = f"{url}/_cluster/health?wait_for_status=yellow&timeout={int(timeout)}s"
    try:
        with urllib.request.urlopen(request, timeout=timeout + 5) as response:
            status = json.load(response).get("status")
    except (urllib.error.URLError, OSError, ValueError) as error:
        raise ElasticsearchStartError(f"no Elasticsearch answers at {url}: {error}") from error
    if status not in ("yellow", "green"):
        raise ElasticsearchStartError(f"Elasticsearch at {url} is {status}, not yellow or green")


def skip_requested(environ: Mapping[str, str]) -> bool:
    """Whether to skip integration tests; raises where a skip is not allowed (CI=true)."""
    if environ.get("RAGSTREAM_SKIP_INTEGRATION", "") not in ("", "0"):
        if environ.get("CI") == "true":
            raise ElasticsearchStartError(
                "RAGSTREAM_SKIP_INTEGRATION is set but CI=true: CI must run them"
            )
        return True
    return False


@pytest.fixture(scope="session")
def elasticsearch_node() -> Iterator[ElasticsearchNode]:
    """The session's node; tests share it, so each should use its own index names."""
    node = ElasticsearchNode(external_url=os.environ.get("RAGSTREAM_ES_URL") or None)
    failure = ""
    try:
        if skip_requested(os.environ):
            pytest.skip("RAGSTREAM_SKIP_INTEGRATION is set")
        node.start()
    except ElasticsearchStartError as error:
        failure = str(error)
    # Failing outside the except block keeps the chained traceback out of the report.
    if failure:
        pytest.fail(f"no Elasticsearch node for the integration tests: {failure}", pytrace=False)
    try:
        yield node
    finally:
        node.stop()


def unique_index(prefix: str) -> str:
    """An index name that no other test of the session uses (lowercase, as ES requires)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def es_client(elasticsearch_node: ElasticsearchNode) -> AsyncIterator[AsyncElasticsearch]:
    client = AsyncElasticsearch(elasticsearch_node.url, request_timeout=30)
    try:
        yield client
    finally:
        await client.close()


async def drop_prefix(client: AsyncElasticsearch, prefix: str) -> None:
    """Deletes the prefix's indices and templates by name (wildcard deletes are refused)."""
    indices = await client.indices.get(index=f"{prefix}-*", expand_wildcards="all")
    if indices.body:
        await client.indices.delete(index=",".join(indices.body))
    templates = await client.indices.get_index_template(name=f"{prefix}-*")
    for template in templates["index_templates"]:
        await client.indices.delete_index_template(name=template["name"])


@pytest.fixture
async def layout(es_client: AsyncElasticsearch) -> AsyncIterator[IndexLayout]:
    """A prefix of its own per test; its indices and templates are removed afterwards."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    try:
        yield IndexLayout(prefix)
    finally:
        await drop_prefix(es_client, prefix)
