"""`pip install` of the repository, as a library user does it, then `ragstream demo` with no
network at all: the default embedder (MiniLM on ONNX Runtime) and the protobuf code come
with the package.

The source is this tree's files less everything git ignores, so the generated protobuf code
and any local venv are left behind, as in a fresh clone. The install uses the pip cache. The
demo runs in a network namespace of its own (`unshare -n`) whose only interface is loopback,
so any download at run time fails. The demo runs with no arguments in an empty folder: its
corpus and questions come with the package.
"""

import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

from ragstream.cli import demo_data
from ragstream.cli.demo import QUESTIONS_ASKED
from tests.support.server import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]
CORPUS = sorted(path.name for path in demo_data.CORPUS.iterdir())
QUESTIONS = json.loads(demo_data.QUESTIONS.read_text(encoding="utf-8"))[:QUESTIONS_ASKED]


def source_tree(target: Path) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    for name in filter(None, listed.decode().split("\0")):
        if (REPO / name).is_file():  # a file deleted but not yet staged is still listed
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


def offline(command: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`command` in a new network namespace with only loopback up."""
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.fail(f"cutting the network needs `unshare -n` (root): {probe.stderr.decode()}")
    return subprocess.run(
        ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *command],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def test_pip_install_alone_runs_the_demo_offline(tmp_path: Path) -> None:
    source = source_tree(tmp_path / "src")
    assert not (source / "services/common/ragstream/v1").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGSTREAM_", "VIRTUAL_ENV"))}
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-compile", str(source)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    listing = "import json; from ragstream.query.transport.http.server import CONSOLE; "
    listing += "print(json.dumps(sorted(str(p.relative_to(CONSOLE)) for p in CONSOLE.rglob('*'))))"
    console = subprocess.run(
        [str(python), "-c", listing], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert console.returncode == 0, console.stderr
    shipped = set(json.loads(console.stdout))
    assert {"index.html", "main.js", "graph.js", "console.css", "vendor/graph-libs.js"} <= shipped
    licences = {p for p in shipped if p.startswith("vendor/licences/")}
    assert any("sigma-" in p for p in licences) and any("graphology-" in p for p in licences)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    demo = offline(
        [str(tmp_path / "venv" / "bin" / "ragstream"), "demo"],
        cwd=empty, env={**env, "COLUMNS": "200"},
    )  # fmt: skip
    output = demo.stdout + demo.stderr
    assert demo.returncode == 0, output
    assert f"indexed {len(CORPUS)} documents" in output
    assert "embedding=minilm:all-MiniLM-L6-v2-qint8" in output
    for number, item in enumerate(QUESTIONS, start=1):
        assert f"Question {number} ({item['mode']})" in output
    assert "2025-skua-3-launch.md" in output  # the naive question's source
    assert "done: server stopped" in output
    assert not any(empty.iterdir())  # the demo keeps its data in a temporary directory
