"""The chart as a whole: helm lint, the values schema, offline Kubernetes schema validation.

Tests on individual rendered objects (probes, security, environment) are in
test_rendered_objects.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helm.chart import (
    CHART,
    HELM_SCRIPT,
    NAMESPACE,
    Helm,
    HelmError,
    Manifest,
    deployment,
    write_values,
)
from tests.helm.conftest import SCENARIOS
from tests.helm.k8s_schemas import LATEST_KUBERNETES, schema_errors

# The first test to run may build helm (minutes, once); everything after takes seconds.
pytestmark = pytest.mark.timeout(1500)

OLDEST_KUBERNETES = "1.27.0"  # Chart.yaml's kubeVersion floor


def test_helm_lint_strict_passes_with_default_and_production_values() -> None:
    done = subprocess.run(
        ["bash", str(HELM_SCRIPT), "lint"],
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert output.count("1 chart(s) linted, 0 chart(s) failed") == 2, output


@pytest.mark.parametrize("kube_version", [OLDEST_KUBERNETES, LATEST_KUBERNETES])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_rendered_object_matches_the_kubernetes_schema(
    helm: Helm, scenario_files: dict[str, list[Path]], scenario: str, kube_version: str
) -> None:
    manifests = helm.template(*scenario_files[scenario], kube_version=kube_version)
    assert manifests
    errors = {
        f"{m['kind']}/{m['metadata']['name']}": schema_errors(m, kube_version) for m in manifests
    }
    assert {name: found for name, found in errors.items() if found} == {}


def test_schema_validation_is_strict(render: Callable[[str], list[Manifest]]) -> None:
    """A field the API does not define is an error, not silently dropped."""
    query = json.loads(json.dumps(deployment(render("default"), "query")))
    query["spec"]["template"]["spec"]["containers"][0]["livenessProbes"] = {}
    errors = schema_errors(query, LATEST_KUBERNETES)
    assert errors and "livenessProbes" in errors[0]


def test_custom_resource_validation_is_strict(render: Callable[[str], list[Manifest]]) -> None:
    (scaled,) = [m for m in render("production") if m["kind"] == "ScaledObject"]
    broken = json.loads(json.dumps(scaled))
    broken["spec"]["maxReplicas"] = 3
    broken["spec"]["triggers"][0]["metadata"]["lagThreshold"] = 100
    errors = schema_errors(broken, LATEST_KUBERNETES)
    assert any("maxReplicas" in e for e in errors), errors
    assert any("lagThreshold" in e for e in errors), errors


@pytest.mark.parametrize(
    ("values", "unknown"),
    [
        ({"replicas": 3}, "replicas"),
        ({"query": {"replicas": 3}}, "replicas"),
        ({"config": {"llm": {"modle": "gpt-4o"}}}, "modle"),
        ({"config": {"embeddings": {"provider": "openai"}}}, "embeddings"),
        ({"secrets": {"llm": {"api_key": {"name": "keys", "key": "llm", "value": "sk"}}}}, "value"),
        ({"indexer": {"keda": {"maxReplica": 4}}}, "maxReplica"),
        ({"otel": {"endpoints": "http://collector:4317"}}, "endpoints"),
        ({"auth": {"tokenSecret": {"name": "ragstream-auth", "key": "t"}}}, "tokenSecret"),
        ({"auth": {"tls": {"secretName": "tls", "caKey": "ca.crt"}}}, "caKey"),
        ({"config": {"auth": {"enabled": True}}}, "auth"),
    ],
)
def test_a_values_file_with_an_unknown_key_fails_with_a_schema_error(
    helm: Helm, values_dir: Path, values: dict[str, Any], unknown: str
) -> None:
    with pytest.raises(HelmError) as refused:
        helm.template(write_values(values_dir, f"typo-{unknown}", values))
    message = str(refused.value)
    assert "values don't meet the specifications of the schema" in message
    assert f"additional properties '{unknown}' not allowed" in message


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({"config": {"llm": {"provider": "openai"}}}, "/config/llm/model"),
        ({"config": {"bus": {"backend": "sqlite"}}}, "/config/bus/backend"),
        ({"config": {"query": {"top_k": 0}}}, "/config/query/top_k"),
        ({"config": {"workspace": "no spaces"}}, "/config/workspace"),
        ({"secrets": {"nebula": {"password": {"name": "Bad_Name", "key": "p"}}}}, "password/name"),
        ({"config": {"chunking": {"chunk_tokens": 100, "overlap_tokens": 100}}}, "overlap_tokens"),
        ({"config": {"chunking": {"max_chunk_tokens": 1000}}}, "max_chunk_tokens must be at least"),
        ({"indexer": {"replicaCount": 7}}, "exceeds config.bus.partitions (6)"),
        ({"indexer": {"keda": {"enabled": True, "maxReplicas": 7}}}, "exceeds config.bus"),
        ({"otel": {"enabled": True}}, "otel.endpoint is required"),
        ({"query": {"autoscaling": {"minReplicas": 5, "maxReplicas": 4}}}, "exceeds maxReplicas"),
        ({"config": {"server": {"max_concurrent_publishes": 0}}}, "max_concurrent_publishes"),
        ({"auth": {"tls": {"secretName": "Bad_Name"}}}, "/auth/tls/secretName"),
        ({"auth": {"clientCA": {"kind": "Pod", "name": "ca", "key": "ca.crt"}}}, "clientCA/kind"),
        (
            {"auth": {"clientCA": {"kind": "Secret", "name": "ca", "key": "ca.crt"}}},
            "auth.clientCA needs auth.tls.secretName",
        ),
        (
            {"auth": {"tokensSecret": {"name": "", "key": "t"}}},
            "auth.tokensSecret.name is required",
        ),
    ],
)
def test_invalid_values_are_refused_with_the_reason(
    helm: Helm, values_dir: Path, defaults_file: Path, values: dict[str, Any], reason: str
) -> None:
    with pytest.raises(HelmError) as refused:
        helm.template(defaults_file, write_values(values_dir, "invalid", values))
    assert reason in str(refused.value)


def _object_schemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema that declares properties, except if/then clauses, which only narrow
    properties that their parent declares."""
    if isinstance(node, dict):
        if "properties" in node:
            yield node
        for key, child in node.items():
            if key not in ("if", "then", "else"):
                yield from _object_schemas(child)
    elif isinstance(node, list):
        for child in node:
            yield from _object_schemas(child)


def test_values_schema_forbids_unknown_keys_at_every_level() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    objects = list(_object_schemas(schema))
    assert len(objects) > 30
    loose = [sorted(o["properties"]) for o in objects if o.get("additionalProperties") is not False]
    assert loose == []


def test_notes_tell_how_to_reach_the_service(
    helm: Helm, defaults_file: Path, tmp_path: Path
) -> None:
    """helm template skips NOTES.txt, so a copy of the chart renders it as a ConfigMap."""
    chart = tmp_path / "ragstream"
    shutil.copytree(CHART, chart)
    shutil.copy(chart / "templates" / "NOTES.txt", chart / "notes-source.txt")
    (chart / "templates" / "notes-as-configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\n"
        'data: {notes: {{ tpl (.Files.Get "notes-source.txt") . | quote }}}\n'
    )
    rendered = helm.template(defaults_file, chart=chart)
    (notes,) = [m for m in rendered if m["metadata"]["name"] == "notes"]
    text = notes["data"]["notes"]
    assert f"rs-ragstream-query.{NAMESPACE}.svc:50051" in text
    assert f"kubectl port-forward -n {NAMESPACE} service/rs-ragstream-query 50051:50051" in text
    assert "grpcurl -plaintext localhost:50051 grpc.health.v1.Health/Check" in text
    assert '-H "authorization: Bearer $TOKEN"' in text and '"ragstream-auth"' in text
    assert "{{" not in text
