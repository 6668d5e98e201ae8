"""The chart's secured Kafka: settings in the ConfigMap, the key password by reference to an
existing Secret, the SASL password, CA, client certificate and OAuth token mounted where the
settings point (in both components, which both talk to Kafka; the password as a file so
that a rotated Secret reaches the running pods), and KEDA's lag triggers authenticated
from the same Secrets through a TriggerAuthentication."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from ragstream.common.bus.kafka_security import kafka_options
from tests.helm.chart import (
    RELEASE,
    Helm,
    HelmError,
    Manifest,
    MountedFile,
    container_env,
    container_settings,
    mounted_file,
    one,
    secret_refs,
    write_values,
)
from tests.support.kafka_tls import CLIENT_KEY_PASSWORD, make_pki

pytestmark = pytest.mark.timeout(1500)  # the first test to run may build helm

FULLNAME = f"{RELEASE}-ragstream"
CA, CERT, KEY = (
    "/etc/ragstream/kafka/ca/ca.crt",
    "/etc/ragstream/kafka/client/tls.crt",
    "/etc/ragstream/kafka/client/tls.key",
)
TOKEN = "/etc/ragstream/kafka/oauth/token"
PASSWORD = "/etc/ragstream/kafka/sasl/password"
SCRAM: dict[str, Any] = {
    "auth": {"enabled": False},
    "config": {
        "bus": {
            "kafka_security": {
                "protocol": "SASL_SSL",
                "sasl_mechanism": "SCRAM-SHA-512",
                "sasl_username": "ragstream-indexer",
            }
        }
    },
    "secrets": {
        "bus": {
            "kafka_security": {
                "sasl_password": {"name": "kafka-user", "key": "password"},
                "key_password": {"name": "kafka-client-key", "key": "passphrase"},
            }
        }
    },
    "kafka": {
        "caSecret": {"name": "kafka-ca", "key": "ca.pem"},
        "clientCertSecret": "kafka-client",
    },
    "indexer": {"keda": {"enabled": True}},
}


def _render(helm: Helm, values_dir: Path, name: str, values: dict[str, Any]) -> list[Manifest]:
    return helm.template(write_values(values_dir, name, values))


def _variant(
    security: dict[str, Any] | None = None,
    secrets: dict[str, Any] | None = None,
    kafka: dict[str, Any] | None = None,
    keda: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """SCRAM with some settings changed; `secrets` and `kafka` replace their sections."""
    values = copy.deepcopy(SCRAM)
    values["config"]["bus"]["kafka_security"].update(security or {})
    if secrets is not None:
        values["secrets"]["bus"]["kafka_security"] = secrets
    values["kafka"].update(kafka or {})
    values["indexer"]["keda"].update(keda or {})
    return values


@pytest.mark.parametrize("component", ["query", "indexer"])
def test_secrets_by_reference_and_files_where_the_settings_point(
    helm: Helm, values_dir: Path, component: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifests = _render(helm, values_dir, "kafka-scram", SCRAM)
    refs = secret_refs(manifests, component)
    assert "RAGSTREAM_BUS__KAFKA_SECURITY__SASL_PASSWORD" not in refs
    assert mounted_file(manifests, component, PASSWORD) == MountedFile(
        "secret", "kafka-user", "password", read_only=True
    )
    assert refs["RAGSTREAM_BUS__KAFKA_SECURITY__KEY_PASSWORD"] == ("kafka-client-key", "passphrase")
    (config_map,) = [m for m in manifests if m["kind"] == "ConfigMap"]
    assert not any(name.endswith("PASSWORD") for name in config_map["data"])
    assert config_map["data"]["RAGSTREAM_BUS__KAFKA_SECURITY__SASL_PASSWORD_FILE"] == PASSWORD
    assert mounted_file(manifests, component, CA) == MountedFile(
        "secret", "kafka-ca", "ca.pem", read_only=True
    )
    assert mounted_file(manifests, component, CERT) == MountedFile(
        "secret", "kafka-client", "tls.crt", read_only=True
    )
    assert mounted_file(manifests, component, KEY) == MountedFile(
        "secret", "kafka-client", "tls.key", read_only=True
    )
    settings = container_settings(container_env(manifests, component), monkeypatch)
    security = settings.bus.kafka_security
    assert (security.protocol, security.sasl_mechanism) == ("SASL_SSL", "SCRAM-SHA-512")
    assert (security.ca_file, security.cert_file, security.key_file) == (
        Path(CA),
        Path(CERT),
        Path(KEY),
    )
    assert security.sasl_password_file == Path(PASSWORD)
    assert not security.sasl_password.get_secret_value()


def test_the_product_loads_the_files_the_chart_mounts(
    helm: Helm, values_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CA, client certificate and encrypted key, placed where the chart mounts them, make the
    TLS context of every Kafka client (only the paths move, to a temporary root)."""
    pki = make_pki(tmp_path / "pki")
    env = container_env(_render(helm, values_dir, "kafka-scram", SCRAM), "indexer")
    for setting, source in (("CA_FILE", pki.ca), ("CERT_FILE", pki.client_cert)):
        env[f"RAGSTREAM_BUS__KAFKA_SECURITY__{setting}"] = str(source)
    env["RAGSTREAM_BUS__KAFKA_SECURITY__KEY_FILE"] = str(pki.client_key)
    env["RAGSTREAM_BUS__KAFKA_SECURITY__KEY_PASSWORD"] = CLIENT_KEY_PASSWORD
    password = tmp_path / "password"
    password.write_text("scram-secret\n")  # as `kubectl create secret --from-file` keeps it
    env["RAGSTREAM_BUS__KAFKA_SECURITY__SASL_PASSWORD_FILE"] = str(password)
    options = kafka_options(container_settings(env, monkeypatch).bus)
    assert options.client()["sasl_plain_password"] == "scram-secret"
    assert options.security["security_protocol"] == "SASL_SSL"
    assert options.security["ssl_context"].check_hostname is True
    assert CLIENT_KEY_PASSWORD not in repr(options)


def test_keda_authenticates_from_the_same_secrets(helm: Helm, values_dir: Path) -> None:
    manifests = _render(helm, values_dir, "kafka-scram", SCRAM)
    auth = one(manifests, "TriggerAuthentication", f"{FULLNAME}-kafka")["spec"]
    assert auth["env"] == [
        {
            "parameter": "username",
            "name": "RAGSTREAM_BUS__KAFKA_SECURITY__SASL_USERNAME",
            "containerName": "indexer",
        }
    ]
    assert {r["parameter"]: (r["name"], r["key"]) for r in auth["secretTargetRef"]} == {
        "password": ("kafka-user", "password"),
        "ca": ("kafka-ca", "ca.pem"),
        "cert": ("kafka-client", "tls.crt"),
        "key": ("kafka-client", "tls.key"),
        "keyPassword": ("kafka-client-key", "passphrase"),
    }
    scaled = one(manifests, "ScaledObject", f"{FULLNAME}-indexer")["spec"]
    for trigger in scaled["triggers"]:
        assert trigger["authenticationRef"] == {"name": f"{FULLNAME}-kafka"}
        assert (trigger["metadata"]["sasl"], trigger["metadata"]["tls"]) == (
            "scram_sha512",
            "enable",
        )


def test_an_operators_trigger_authentication_replaces_the_charts(
    helm: Helm, values_dir: Path
) -> None:
    values = _variant(keda={"authenticationRef": "ops-kafka"})
    manifests = _render(helm, values_dir, "kafka-own-auth", values)
    assert [m for m in manifests if m["kind"] == "TriggerAuthentication"] == []
    scaled = one(manifests, "ScaledObject", f"{FULLNAME}-indexer")["spec"]
    assert {t["authenticationRef"]["name"] for t in scaled["triggers"]} == {"ops-kafka"}


def test_oauthbearer_mounts_the_token_and_keda_needs_its_own_authentication(
    helm: Helm, values_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    oauth: dict[str, Any] = {
        "security": {"sasl_mechanism": "OAUTHBEARER", "sasl_username": ""},
        "secrets": {},
        "kafka": {"oauthTokenSecret": {"name": "kafka-token", "key": "jwt"}},
    }
    with pytest.raises(HelmError, match=r"indexer\.keda\.authenticationRef"):
        _render(helm, values_dir, "kafka-oauth-keda", _variant(**oauth))
    values = _variant(**oauth, keda={"authenticationRef": "ops-oauth"})
    manifests = _render(helm, values_dir, "kafka-oauth", values)
    assert mounted_file(manifests, "query", TOKEN) == MountedFile(
        "secret", "kafka-token", "jwt", read_only=True
    )
    env = container_env(manifests, "query")
    assert container_settings(env, monkeypatch).bus.kafka_security.oauth_token_file == Path(TOKEN)


@pytest.mark.parametrize(
    ("name", "values", "message"),
    [
        ("no-password", _variant(secrets={}), "secrets.bus.kafka_security.sasl_password"),
        (
            "files-without-tls",
            _variant({"protocol": "PLAINTEXT", "sasl_mechanism": ""}, secrets={}),
            "need config.bus.kafka_security.protocol SSL or SASL_SSL",
        ),
        ("no-mechanism", _variant({"sasl_mechanism": ""}), "sasl_mechanism is required"),
        ("unknown-protocol", _variant({"protocol": "TLS"}), "protocol"),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_inconsistent_kafka_values_fail_at_render(
    helm: Helm, values_dir: Path, name: str, values: dict[str, Any], message: str
) -> None:
    with pytest.raises(HelmError, match=message):
        _render(helm, values_dir, f"kafka-bad-{name}", values)
