"""The objects the chart renders: what each Deployment runs, how it is probed, secured,
configured and scaled."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, SecretStr

from ragstream.common.config import Settings
from tests.helm.chart import (
    CHART,
    NAMESPACE,
    PRODUCTION_VALUES,
    RELEASE,
    Helm,
    HelmError,
    Manifest,
    container_env,
    container_settings,
    deployment,
    objects,
    one,
    secret_refs,
    write_values,
)
from tests.helm.conftest import SCENARIOS
from tests.helm.pod_security import restricted_violations

pytestmark = pytest.mark.timeout(1500)  # the first test to run may build helm

Render = Callable[[str], list[Manifest]]
COMPONENTS = ("query", "indexer")
FULLNAME = f"{RELEASE}-ragstream"
TLS_SCENARIOS = frozenset({"production", "everything"})
HEALTH_PORT = 8081
"""query.healthPort of values.yaml: the plaintext health-only port of a TLS query service."""
"""Their query service speaks TLS (auth.tls.secretName)."""


def _pod(manifests: list[Manifest], component: str) -> dict[str, Any]:
    spec: dict[str, Any] = deployment(manifests, component)["spec"]["template"]["spec"]
    return spec


def _container(manifests: list[Manifest], component: str) -> dict[str, Any]:
    (container,) = _pod(manifests, component)["containers"]
    return dict(container)


def _kinds(manifests: list[Manifest]) -> list[tuple[str, str]]:
    return sorted((m["kind"], m["metadata"]["name"]) for m in manifests)


def test_default_values_render_the_base_objects(render: Render) -> None:
    assert _kinds(render("default")) == [
        ("ConfigMap", FULLNAME),
        ("Deployment", f"{FULLNAME}-indexer"),
        ("Deployment", f"{FULLNAME}-query"),
        ("HorizontalPodAutoscaler", f"{FULLNAME}-query"),
        ("PodDisruptionBudget", f"{FULLNAME}-indexer"),
        ("PodDisruptionBudget", f"{FULLNAME}-query"),
        ("Service", f"{FULLNAME}-query"),
        ("ServiceAccount", FULLNAME),
    ]


def test_optional_objects_follow_their_switches(render: Render) -> None:
    production = _kinds(render("production"))
    for extra in [
        ("ScaledObject", f"{FULLNAME}-indexer"),
        ("NetworkPolicy", f"{FULLNAME}-query"),
        ("NetworkPolicy", f"{FULLNAME}-indexer"),
        ("Service", f"{FULLNAME}-query-headless"),
    ]:
        assert extra in production
    minimal = render("minimal")
    assert {kind for kind, _ in _kinds(minimal)} == {"ConfigMap", "Deployment", "Service"}
    assert deployment(minimal, "query")["spec"]["replicas"] == 2
    assert _pod(minimal, "query")["serviceAccountName"] == "default"


def test_no_secret_object_is_rendered(render: Render) -> None:
    """Credentials stay in Secrets the operator owns; the chart only references them."""
    for scenario in SCENARIOS:
        assert objects(render(scenario), "Secret") == []


def test_each_deployment_runs_its_command(render: Render) -> None:
    manifests = render("default")
    query, indexer = _container(manifests, "query"), _container(manifests, "indexer")
    assert [query["command"], query["args"]] == [
        ["ragstream"],
        ["serve", "--no-indexer", "--listen", "0.0.0.0:50051"],
    ]
    assert [indexer["command"], indexer["args"]] == [
        ["ragstream"],
        ["indexer", "--health-listen", "0.0.0.0:8081"],
    ]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize(("component", "port"), [("query", 50051), ("indexer", 8081)])
def test_probes_are_native_grpc_health_checks_on_a_plaintext_port(
    render: Render, scenario: str, component: str, port: int
) -> None:
    """The kubelet's gRPC probe has no TLS: a query service with TLS also serves a plaintext
    health-only port (serve --health-listen), and the probes go there. The indexer's health
    port is always plaintext."""
    container = _container(render(scenario), component)
    http = {"http": 8443} if component == "query" and scenario == "everything" else {}
    tls = component == "query" and scenario in TLS_SCENARIOS
    probed = HEALTH_PORT if tls else port
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    if tls:
        assert ports == {"grpc": port, "health": HEALTH_PORT, **http}
        health_listen = container["args"][container["args"].index("--health-listen") + 1]
        assert health_listen == f"0.0.0.0:{HEALTH_PORT}"
    else:
        assert list(ports.values()) == [port]
        assert component == "indexer" or "--health-listen" not in container["args"]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        check = container[probe]
        assert check["grpc"] == {"port": probed, "service": ""}, probe
        assert {"tcpSocket", "httpGet", "exec"}.isdisjoint(check), probe


def test_the_service_reaches_the_query_pods_grpc_port(render: Render) -> None:
    manifests = render("production")
    query = deployment(manifests, "query")
    pod_labels = query["spec"]["template"]["metadata"]["labels"]
    port_names = {p["name"] for p in _container(manifests, "query")["ports"]}
    for name in (f"{FULLNAME}-query", f"{FULLNAME}-query-headless"):
        service = one(manifests, "Service", name)
        assert service["spec"]["selector"].items() <= pod_labels.items()
        assert service["spec"]["selector"]["app.kubernetes.io/component"] == "query"
        (port,) = service["spec"]["ports"]
        assert port["targetPort"] in port_names and port["appProtocol"] == "grpc"


def test_the_http_port_is_off_unless_enabled(
    render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    for scenario in ("default", "production", "minimal"):
        manifests = render(scenario)
        assert "--http-listen" not in _container(manifests, "query")["args"]
        service = one(manifests, "Service", f"{FULLNAME}-query")["spec"]
        assert [p["name"] for p in service["ports"]] == ["grpc"]
    manifests = render("everything")
    query = _container(manifests, "query")
    assert query["args"][-2:] == ["--http-listen", "0.0.0.0:8443"]
    assert {"name": "http", "containerPort": 8443, "protocol": "TCP"} in query["ports"]
    service = one(manifests, "Service", f"{FULLNAME}-query")["spec"]
    http = next(p for p in service["ports"] if p["name"] == "http")
    assert (http["port"], http["targetPort"], http["appProtocol"]) == (443, "http", "http")
    rules = one(manifests, "NetworkPolicy", f"{FULLNAME}-query")["spec"]["ingress"]
    [api] = [r for r in rules if {"port": "grpc", "protocol": "TCP"} in r["ports"]]
    assert {"port": "http", "protocol": "TCP"} in api["ports"]  # admitted like gRPC
    settings = container_settings(container_env(manifests, "query"), monkeypatch)
    assert settings.server.http_cors_origins == ("https://console.example",)
    assert settings.server.http_listen == "0.0.0.0:8443"
    service_names = {f"{FULLNAME}-query", f"{FULLNAME}-query.{NAMESPACE}.svc.cluster.local"}
    assert service_names | {"ragstream.example"} <= set(settings.server.http_allowed_hosts)


def test_the_http_port_must_differ_from_the_grpc_port(
    helm: Helm, values_dir: Path, defaults_file: Path
) -> None:
    same = write_values(
        values_dir, "same-port", {"query": {"http": {"enabled": True, "port": 50051}}}
    )
    with pytest.raises(HelmError, match=r"query\.http\.port must differ from query\.port"):
        helm.template(defaults_file, same)


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("component", COMPONENTS)
def test_deployments_pass_the_restricted_pod_security_standard(
    render: Render, scenario: str, component: str
) -> None:
    pod = _pod(render(scenario), component)
    assert restricted_violations(pod) == []
    container = _container(render(scenario), component)
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["runAsUser"] == 10001
    (tmp,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == tmp["name"]]
    assert "emptyDir" in volume
    assert pod["automountServiceAccountToken"] is False


@pytest.mark.parametrize(
    ("path", "value", "violation"),
    [
        (("containers", 0, "securityContext", "privileged"), True, "privileged"),
        (("containers", 0, "securityContext", "allowPrivilegeEscalation"), True, "Escalation"),
        (("containers", 0, "securityContext", "capabilities", "drop"), [], "drop ALL"),
        (("containers", 0, "securityContext", "capabilities", "add"), ["SYS_ADMIN"], "SYS_ADMIN"),
        (("containers", 0, "securityContext", "runAsUser"), 0, "runAsUser is 0"),
        (("securityContext", "seccompProfile", "type"), "Unconfined", "seccompProfile"),
        (("hostNetwork",), True, "hostNetwork"),
        (("volumes", 0), {"name": "host", "hostPath": {"path": "/"}}, "hostPath"),
    ],
)
def test_the_pod_security_check_catches_each_violation(
    render: Render, path: tuple[Any, ...], value: Any, violation: str
) -> None:
    pod = copy.deepcopy(_pod(render("default"), "query"))
    pod["containers"][0]["securityContext"].pop("seccompProfile")
    target = pod
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    problems = restricted_violations(pod)
    assert any(violation in p for p in problems), problems


KAFKA_SECURITY = "RAGSTREAM_BUS__KAFKA_SECURITY__"
ALTERNATIVES = {
    f"{KAFKA_SECURITY}SASL_PASSWORD_FILE": f"{KAFKA_SECURITY}SASL_PASSWORD",
    f"{KAFKA_SECURITY}SASL_USERNAME": f"{KAFKA_SECURITY}SASL_USERNAME_FILE",
}
"""Settings that exclude each other: the chart gives the first of each pair (the password as
a mounted file, so that a rotated Secret reaches the pods; the user name in the ConfigMap)."""


def _settings_env_names() -> dict[str, bool]:
    """RAGSTREAM_* name of every setting -> whether it is a secret."""
    return _env_names("RAGSTREAM", Settings)


def _env_names(prefix: str, model: type[BaseModel]) -> dict[str, bool]:
    names: dict[str, bool] = {}
    for field, info in model.model_fields.items():
        name, kind = f"{prefix}_{field}".upper(), info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            names |= _env_names(f"{name}_", kind)  # a section: its fields are NAME__FIELD
        else:
            names[name] = kind is SecretStr
    return names


@pytest.mark.parametrize("component", COMPONENTS)
def test_every_setting_reaches_the_container_and_loads(
    render: Render, component: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = container_env(render("everything"), component)
    names = _settings_env_names()
    given = set(env) | {ALTERNATIVES[name] for name in env if name in ALTERNATIVES}
    assert sorted(set(names) - given) == []
    assert sorted(n for n in env if n.startswith("RAGSTREAM_") and n not in names) == []
    settings = container_settings(env, monkeypatch)
    config = yaml.safe_load(PRODUCTION_VALUES.read_text())["config"]
    assert settings.llm.model == config["llm"]["model"]
    assert settings.elasticsearch.hosts == config["elasticsearch"]["hosts"]
    assert settings.bus.partitions == config["bus"]["partitions"] == 12
    assert settings.indexer.max_document_bytes == 10_000_000
    assert settings.chunking.split_by_character == "\n\n"
    assert settings.server.listen == "0.0.0.0:50051"
    assert settings.server.max_concurrent_publishes == config["server"]["max_concurrent_publishes"]
    assert settings.llm.api_key.get_secret_value() == "secret:ragstream-model-keys/llm-api-key"
    auth = settings.auth
    assert auth.enabled is True
    assert auth.tokens_file == Path("/etc/ragstream/auth/tokens.toml")
    assert (auth.tls_cert, auth.tls_key) == (
        Path("/etc/ragstream/tls/tls.crt"),
        Path("/etc/ragstream/tls/tls.key"),
    )
    assert auth.client_ca == Path("/etc/ragstream/client-ca/ca.crt")


def test_every_default_value_is_what_the_product_loads(
    render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ConfigMap's text for each value parses back to the value itself; a null value
    sets nothing, so the product's own default applies (e.g. sizes from the pod's cores)."""
    env = container_env(render("default"), "query")
    settings = container_settings(env, monkeypatch).model_dump(mode="json")
    defaults = yaml.safe_load((CHART / "values.yaml").read_text())["config"]
    for section, fields in defaults.items():
        if not isinstance(fields, dict):
            assert settings[section] == fields, section
            continue
        for field, value in fields.items():
            if value is None:
                assert f"RAGSTREAM_{section}__{field}".upper() not in env, f"{section}.{field}"
                continue
            loaded = settings[section][field]
            if isinstance(value, dict):  # a nested section: the values it sets
                loaded = {name: loaded[name] for name in value}
            assert loaded == value, f"{section}.{field}"


def test_credentials_come_from_secrets_by_reference(render: Render) -> None:
    secret_names = {n for n, secret in _settings_env_names().items() if secret}
    for scenario in SCENARIOS:
        (config_map,) = objects(render(scenario), "ConfigMap")
        assert secret_names.isdisjoint(config_map["data"]), scenario
    for component in COMPONENTS:
        refs = secret_refs(render("everything"), component)
        as_files = {ALTERNATIVES[f"{KAFKA_SECURITY}SASL_PASSWORD_FILE"]}  # mounted instead
        assert {n for n in refs if n.startswith("RAGSTREAM_")} == secret_names - as_files
        assert refs["RAGSTREAM_NEBULA__PASSWORD"] == ("ragstream-nebula", "password")
        assert refs["OTEL_EXPORTER_OTLP_HEADERS"] == ("ragstream-otel", "headers")
        assert secret_refs(render("default"), component) == {}


def test_opentelemetry_settings_reach_each_component(render: Render) -> None:
    for component in COMPONENTS:
        env = container_env(render("production"), component)
        assert env["OTEL_SERVICE_NAME"] == f"{FULLNAME}-{component}"
        assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector.observability.svc:4317"
        assert env["OTEL_TRACES_EXPORTER"] == "otlp"
        assert env["OTEL_TRACES_SAMPLER_ARG"] == "0.2"
        assert "deployment.environment=production" in env["OTEL_RESOURCE_ATTRIBUTES"]
        assert "k8s.pod.name=$(POD_NAME)" in env["OTEL_RESOURCE_ATTRIBUTES"]
        off = container_env(render("default"), component)
        assert off["OTEL_SDK_DISABLED"] == "true" and off["OTEL_TRACES_EXPORTER"] == "none"


def test_query_service_autoscales_on_cpu(render: Render) -> None:
    manifests = render("production")
    hpa = one(manifests, "HorizontalPodAutoscaler", f"{FULLNAME}-query")["spec"]
    assert hpa["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": f"{FULLNAME}-query",
    }
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (3, 20)
    assert {m["resource"]["name"] for m in hpa["metrics"]} == {"cpu", "memory"}
    assert "replicas" not in deployment(manifests, "query")["spec"]


def test_keda_scales_the_indexer_on_lag_up_to_the_partition_count(render: Render) -> None:
    manifests = render("production")
    scaled = one(manifests, "ScaledObject", f"{FULLNAME}-indexer")["spec"]
    assert scaled["scaleTargetRef"]["name"] == f"{FULLNAME}-indexer"
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (1, 12)
    topics = {t["metadata"]["topic"] for t in scaled["triggers"]}
    assert topics == {"ragstream.documents", "ragstream.graph-merge"}
    groups = {t["metadata"]["topic"]: t["metadata"]["consumerGroup"] for t in scaled["triggers"]}
    assert groups == {
        "ragstream.documents": "ragstream-indexer",
        "ragstream.graph-merge": "ragstream-indexer.graph-merge",
    }
    for trigger in scaled["triggers"]:
        assert trigger["type"] == "kafka"
        assert trigger["metadata"]["lagThreshold"] == "200"
        assert trigger["metadata"]["allowIdleConsumers"] == "false"
    assert "replicas" not in deployment(manifests, "indexer")["spec"]


def test_disruption_budgets_select_their_own_pods(render: Render) -> None:
    manifests = render("default")
    for component in COMPONENTS:
        budget = one(manifests, "PodDisruptionBudget", f"{FULLNAME}-{component}")["spec"]
        labels = deployment(manifests, component)["spec"]["template"]["metadata"]["labels"]
        assert budget["selector"]["matchLabels"].items() <= labels.items()
        assert budget["selector"]["matchLabels"]["app.kubernetes.io/component"] == component


def test_network_policies_admit_grpc_and_restrict_egress(render: Render) -> None:
    manifests = render("production")
    query = one(manifests, "NetworkPolicy", f"{FULLNAME}-query")["spec"]
    assert query["policyTypes"] == ["Ingress", "Egress"]
    ingress, probes = query["ingress"]
    assert ingress["ports"] == [{"port": "grpc", "protocol": "TCP"}]
    assert ingress["from"][0]["namespaceSelector"]["matchLabels"] == {"ragstream.io/client": "true"}
    # Under TLS the probes reach the plaintext health port (the kubelet is not a client).
    assert probes == {"ports": [{"port": "health", "protocol": "TCP"}]}
    dns = query["egress"][0]["ports"]
    assert {(p["port"], p["protocol"]) for p in dns} == {(53, "UDP"), (53, "TCP")}
    indexer = one(manifests, "NetworkPolicy", f"{FULLNAME}-indexer")["spec"]
    assert [r["ports"] for r in indexer["ingress"]] == [[{"port": "health", "protocol": "TCP"}]]


def test_config_changes_roll_the_pods(
    helm: Helm, values_dir: Path, defaults_file: Path, render: Render
) -> None:
    log = write_values(values_dir, "log", {"config": {"log_level": "DEBUG"}})
    changed = helm.template(defaults_file, log)
    for component in COMPONENTS:
        before = deployment(render("default"), component)["spec"]["template"]["metadata"]
        after = deployment(changed, component)["spec"]["template"]["metadata"]
        assert before["annotations"]["checksum/config"] != after["annotations"]["checksum/config"]
