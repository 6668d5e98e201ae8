"""Fixtures of the chart tests: a real helm, and the chart rendered with each values set."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helm.chart import (
    PRODUCTION_VALUES,
    Helm,
    HelmError,
    Manifest,
    install_helm,
    write_values,
)

# Values sets the rendered-object tests run on. "default" is values.yaml plus the one value it
# cannot default: the Secret holding the tokens file (auth is on by default). "everything" is
# the production example (tokens over TLS) with every credential referenced, mTLS and the
# HTTP/JSON port; "minimal" turns every optional object off, authentication included.
TOKENS_SECRET = {"name": "ragstream-auth", "key": "tokens.toml"}
DEFAULTS: dict[str, Any] = {"auth": {"tokensSecret": TOKENS_SECRET}}
EVERYTHING: dict[str, Any] = {
    "config": {
        "bus": {
            "kafka_security": {
                "protocol": "SASL_SSL",
                "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_username": "ragstream-indexer",
            }
        },
        "server": {
            "http_cors_origins": ["https://console.example"],
            "http_allowed_hosts": ["ragstream.example"],
        },
    },
    "secrets": {
        "elasticsearch": {"api_key": {"name": "ragstream-elasticsearch", "key": "api-key"}},
        "bus": {
            "kafka_security": {
                "sasl_password": {"name": "ragstream-kafka-user", "key": "password"},
                "key_password": {"name": "ragstream-kafka-client-key", "key": "password"},
            }
        },
    },
    "kafka": {
        "caSecret": {"name": "kafka-cluster-ca", "key": "ca.crt"},
        "clientCertSecret": "ragstream-kafka-client",
        "oauthTokenSecret": {"name": "ragstream-kafka-token", "key": "token"},
    },
    "auth": {"clientCA": {"kind": "ConfigMap", "name": "ragstream-client-ca", "key": "ca.crt"}},
    "query": {"http": {"enabled": True, "port": 8443, "servicePort": 443}},
}
MINIMAL: dict[str, Any] = {
    "serviceAccount": {"create": False},
    "query": {"autoscaling": {"enabled": False}, "pdb": {"enabled": False}},
    "indexer": {"pdb": {"enabled": False}, "keda": {"enabled": False}},
    "networkPolicy": {"enabled": False},
    "auth": {"enabled": False},
}
SCENARIOS = ("default", "production", "everything", "minimal")


@pytest.fixture(scope="session")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Helm:
    """helm from scripts/helm.sh; the tests fail (never skip) when it cannot be had."""
    try:
        binary = install_helm()
    except (HelmError, subprocess.TimeoutExpired) as error:
        pytest.fail(f"helm is required for the chart tests: {error}")
    return Helm(binary=binary, home=tmp_path_factory.mktemp("helm-home"))


@pytest.fixture(scope="session")
def values_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("values")


@pytest.fixture(scope="session")
def defaults_file(values_dir: Path) -> Path:
    """The "default" values set, for tests that add their own values on top."""
    return write_values(values_dir, "defaults", DEFAULTS)


@pytest.fixture(scope="session")
def scenario_files(values_dir: Path, defaults_file: Path) -> dict[str, list[Path]]:
    return {
        "default": [defaults_file],
        "production": [PRODUCTION_VALUES],
        "everything": [PRODUCTION_VALUES, write_values(values_dir, "everything", EVERYTHING)],
        "minimal": [write_values(values_dir, "minimal", MINIMAL)],
    }


@pytest.fixture(scope="session")
def render(helm: Helm, scenario_files: dict[str, list[Path]]) -> Callable[[str], list[Manifest]]:
    """Renders a named values set once per session."""
    cache: dict[str, list[Manifest]] = {}

    def rendered(scenario: str) -> list[Manifest]:
        if scenario not in cache:
            cache[scenario] = helm.template(*scenario_files[scenario])
        return cache[scenario]

    return rendered
