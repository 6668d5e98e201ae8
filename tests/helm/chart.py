"""Renders the Helm chart with a real helm binary and reads the objects back.

helm is built by scripts/helm.sh into .cache/tools/bin on first use. If it cannot be had,
the chart tests fail with helm's own output: they never skip.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragstream.common.config import Settings

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "ragstream"
PRODUCTION_VALUES = REPO / "deploy" / "helm" / "examples" / "production-values.yaml"
HELM_SCRIPT = REPO / "scripts" / "helm.sh"
RELEASE = "rs"
NAMESPACE = "ragstream"

Manifest = dict[str, Any]


class HelmError(Exception):
    """helm exited non-zero; the message carries its stderr."""


def install_helm(timeout_s: float = 1200) -> Path:
    """The helm binary, built by scripts/helm.sh when missing (minutes, once)."""
    done = subprocess.run(
        ["bash", str(HELM_SCRIPT), "path"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    if done.returncode != 0:
        raise HelmError(f"scripts/helm.sh could not provide helm:\n{done.stdout}{done.stderr}")
    return Path(done.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Helm:
    binary: Path
    home: Path
    """Holds helm's cache, config and data directories, away from the user's home."""

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {
            "PATH": "/usr/bin:/bin",
            "HELM_CACHE_HOME": str(self.home / "cache"),
            "HELM_CONFIG_HOME": str(self.home / "config"),
            "HELM_DATA_HOME": str(self.home / "data"),
        }
        return subprocess.run(
            [str(self.binary), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )

    def template(
        self, *values_files: Path, chart: Path = CHART, kube_version: str | None = None
    ) -> list[Manifest]:
        """Every object `helm template` renders, in order; HelmError if it refuses."""
        args = ["template", RELEASE, str(chart), "--namespace", NAMESPACE]
        if kube_version:
            args += ["--kube-version", kube_version]
        for values in values_files:
            args += ["--values", str(values)]
        done = self.run(*args)
        if done.returncode != 0:
            raise HelmError(done.stderr.strip())
        return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def write_values(directory: Path, name: str, values: Mapping[str, Any]) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(dict(values), sort_keys=False))
    return path


def objects(manifests: Sequence[Manifest], kind: str) -> list[Manifest]:
    return [m for m in manifests if m["kind"] == kind]


def one(manifests: Sequence[Manifest], kind: str, name: str) -> Manifest:
    found = [m for m in objects(manifests, kind) if m["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def deployment(manifests: Sequence[Manifest], component: str) -> Manifest:
    return one(manifests, "Deployment", f"{RELEASE}-ragstream-{component}")


def container_env(manifests: Sequence[Manifest], component: str) -> dict[str, str]:
    """The environment the component's container starts with.

    The ConfigMap named in envFrom is read from the same render; a secretKeyRef becomes the
    text `secret:<name>/<key>`, which tells where the value comes from without having it.
    Variables that only the kubelet can fill (fieldRef) are left out.
    """
    spec = deployment(manifests, component)["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        config_map = one(manifests, "ConfigMap", source["configMapRef"]["name"])
        env.update(config_map["data"])
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = var["value"]
        elif "secretKeyRef" in var.get("valueFrom", {}):
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = f"secret:{ref['name']}/{ref['key']}"
    return env


def secret_refs(manifests: Sequence[Manifest], component: str) -> dict[str, tuple[str, str]]:
    """Environment variable name -> (Secret name, key), for the component's container."""
    spec = deployment(manifests, component)["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    refs: dict[str, tuple[str, str]] = {}
    for var in container.get("env", []):
        ref = var.get("valueFrom", {}).get("secretKeyRef")
        if ref:
            refs[var["name"]] = (ref["name"], ref["key"])
    return refs


@dataclass(frozen=True)
class MountedFile:
    """The Secret or ConfigMap key a container sees as a file."""

    kind: str
    """"secret" or "configMap"."""
    name: str
    key: str
    read_only: bool


def mounted_file(manifests: Sequence[Manifest], component: str, path: str) -> MountedFile | None:
    """Where the file at `path` in the component's container comes from; None: no mount has it."""
    spec = deployment(manifests, component)["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    volumes = {volume["name"]: volume for volume in spec.get("volumes", [])}
    for mount in container.get("volumeMounts", []):
        directory = mount["mountPath"].rstrip("/") + "/"
        if path.startswith(directory):
            found = _volume_file(volumes[mount["name"]], path.removeprefix(directory))
            if found is not None:
                kind, name, key = found
                return MountedFile(kind, name, key, bool(mount.get("readOnly", False)))
    return None


def _volume_file(volume: Manifest, relative: str) -> tuple[str, str, str] | None:
    """(kind, object name, key) of the file at `relative` in a Secret or ConfigMap volume;
    without `items` every key appears under its own name."""
    for kind, name_field in (("secret", "secretName"), ("configMap", "name")):
        source = volume.get(kind)
        if source is None:
            continue
        items = source.get("items")
        if items is None:
            return kind, source[name_field], relative
        keys = [item["key"] for item in items if item["path"] == relative]
        return (kind, source[name_field], keys[0]) if keys else None
    return None


def container_settings(env: Mapping[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    """Settings as the product loads them in a container with exactly this environment."""
    for name in list(os.environ):
        if name.startswith("RAGSTREAM_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings()
