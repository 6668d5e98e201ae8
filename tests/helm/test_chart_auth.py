"""The chart's auth settings: bearer tokens on by default from a Secret, optional TLS and
mTLS from Secrets or ConfigMaps, each file mounted read-only where the settings point, and
probes that still work when the gRPC port speaks TLS."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ragstream.common.health import HealthServer
from ragstream.query.transport.auth import build_authenticator, server_credentials, token_digest
from ragstream.query.transport.server import GrpcServer
from tests.helm.chart import (
    CHART,
    Helm,
    HelmError,
    Manifest,
    MountedFile,
    container_env,
    container_settings,
    deployment,
    mounted_file,
    write_values,
)

pytestmark = pytest.mark.timeout(1500)  # the first test to run may build helm

Render = Callable[[str], list[Manifest]]
TOKEN = "tok-chart-3f9c"
TOKENS_FILE = "/etc/ragstream/auth/tokens.toml"
TLS_CERT, TLS_KEY = "/etc/ragstream/tls/tls.crt", "/etc/ragstream/tls/tls.key"
CLIENT_CA = "/etc/ragstream/client-ca/ca.crt"
FILE_SETTINGS = ("TOKENS_FILE", "TLS_CERT", "TLS_KEY", "CLIENT_CA")


def _auth_env(env: Mapping[str, str]) -> dict[str, str]:
    return {n: v for n, v in env.items() if n.startswith("RAGSTREAM_AUTH__")}


def _volume_names(manifests: list[Manifest], component: str) -> set[str]:
    spec = deployment(manifests, component)["spec"]["template"]["spec"]
    return {volume["name"] for volume in spec["volumes"]}


def test_auth_is_on_by_default_with_the_tokens_file_from_its_secret(
    render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert yaml.safe_load((CHART / "values.yaml").read_text())["auth"]["enabled"] is True
    manifests = render("default")
    for component in ("query", "indexer"):
        env = container_env(manifests, component)
        assert _auth_env(env) == {
            "RAGSTREAM_AUTH__ENABLED": "true",
            "RAGSTREAM_AUTH__TOKENS_FILE": TOKENS_FILE,
        }
        auth = container_settings(env, monkeypatch).auth
        assert (auth.enabled, auth.tokens_file) == (True, Path(TOKENS_FILE))
    assert mounted_file(manifests, "query", TOKENS_FILE) == MountedFile(
        "secret", "ragstream-auth", "tokens.toml", read_only=True
    )
    # The indexer serves only health and reads no auth file: it gets no Secret it does not use.
    assert mounted_file(manifests, "indexer", TOKENS_FILE) is None
    assert _volume_names(manifests, "indexer") == {"tmp"}


def test_rendering_with_auth_on_and_no_tokens_secret_fails(helm: Helm) -> None:
    """The product would refuse to start; the chart refuses to render instead."""
    with pytest.raises(HelmError) as refused:
        helm.template()
    message = str(refused.value)
    assert "auth.tokensSecret.name is required when auth.enabled is true" in message
    assert "auth.enabled=false" in message


def test_the_tokens_file_keeps_the_key_name_that_tells_its_format(
    helm: Helm, values_dir: Path
) -> None:
    """The product reads a file ending in .json as JSON, any other as TOML."""
    values = {"auth": {"tokensSecret": {"name": "tokens", "key": "grants.json"}}}
    manifests = helm.template(write_values(values_dir, "json-tokens", values))
    path = container_env(manifests, "query")["RAGSTREAM_AUTH__TOKENS_FILE"]
    assert path == "/etc/ragstream/auth/grants.json"
    assert mounted_file(manifests, "query", path) == MountedFile(
        "secret", "tokens", "grants.json", read_only=True
    )


def test_auth_off_needs_no_secret_and_mounts_none(
    render: Render, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifests = render("minimal")
    env = container_env(manifests, "query")
    assert _auth_env(env) == {"RAGSTREAM_AUTH__ENABLED": "false"}
    assert container_settings(env, monkeypatch).auth.enabled is False
    assert _volume_names(manifests, "query") == {"tmp"}


def test_tls_and_the_client_ca_are_files_from_their_objects(render: Render) -> None:
    production, everything = render("production"), render("everything")
    assert "RAGSTREAM_AUTH__CLIENT_CA" not in container_env(production, "query")
    env = container_env(everything, "query")
    assert [env[f"RAGSTREAM_AUTH__{s}"] for s in FILE_SETTINGS] == [
        TOKENS_FILE,
        TLS_CERT,
        TLS_KEY,
        CLIENT_CA,
    ]
    assert [mounted_file(everything, "query", path) for path in (TLS_CERT, TLS_KEY)] == [
        MountedFile("secret", "ragstream-query-tls", "tls.crt", read_only=True),
        MountedFile("secret", "ragstream-query-tls", "tls.key", read_only=True),
    ]
    assert mounted_file(everything, "query", CLIENT_CA) == MountedFile(
        "configMap", "ragstream-client-ca", "ca.crt", read_only=True
    )
    assert not any(name.startswith("auth-") for name in _volume_names(everything, "indexer"))


@pytest.mark.parametrize(("kind", "volume"), [("Secret", "secret"), ("ConfigMap", "configMap")])
def test_the_client_ca_comes_from_a_secret_or_a_config_map(
    helm: Helm, values_dir: Path, defaults_file: Path, kind: str, volume: str
) -> None:
    values = {
        "auth": {
            "tls": {"secretName": "query-tls"},
            "clientCA": {"kind": kind, "name": "clients", "key": "bundle.pem"},
        }
    }
    manifests = helm.template(defaults_file, write_values(values_dir, f"ca-{kind}", values))
    assert container_env(manifests, "query")["RAGSTREAM_AUTH__CLIENT_CA"] == CLIENT_CA
    assert mounted_file(manifests, "query", CLIENT_CA) == MountedFile(
        volume, "clients", "bundle.pem", read_only=True
    )


def _self_signed(directory: Path) -> tuple[bytes, bytes]:
    """(certificate, key) in PEM for localhost, made by openssl."""
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", "tls.key", "-out", "tls.crt", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
        cwd=directory, check=True, capture_output=True,
    )  # fmt: skip
    return (directory / "tls.crt").read_bytes(), (directory / "tls.key").read_bytes()


def _materialize(
    manifests: list[Manifest],
    objects: Mapping[tuple[str, str], Mapping[str, bytes]],
    root: Path,
) -> dict[str, str]:
    """The query container's environment, with each auth file written under `root` where the
    chart mounts it, holding the key of the object the chart names."""
    env = container_env(manifests, "query")
    for name in (f"RAGSTREAM_AUTH__{s}" for s in FILE_SETTINGS):
        if name not in env:
            continue
        source = mounted_file(manifests, "query", env[name])
        assert source is not None, f"{env[name]} ({name}) is not mounted"
        local = root / env[name].lstrip("/")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(objects[(source.kind, source.name)][source.key])
        env[name] = str(local)
    return env


async def test_the_product_reads_the_files_the_chart_mounts(
    render: Render, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tokens, certificate, key and client CA, placed as the kubelet would place them, are
    what the query service loads (only file paths are changed, to a temporary root)."""
    cert, key = _self_signed(tmp_path)
    tokens = f'[[tokens]]\nname = "ops"\nsha256 = "{token_digest(TOKEN)}"\nworkspaces = ["*"]\n'
    objects: dict[tuple[str, str], dict[str, bytes]] = {
        ("secret", "ragstream-auth"): {"tokens.toml": tokens.encode()},
        ("secret", "ragstream-query-tls"): {"tls.crt": cert, "tls.key": key},
        ("configMap", "ragstream-client-ca"): {"ca.crt": cert},
    }
    env = _materialize(render("everything"), objects, tmp_path / "pod")
    settings = container_settings(env, monkeypatch)
    authenticator = build_authenticator(settings.auth)
    assert authenticator is not None
    assert authenticator.authenticate([("authorization", f"Bearer {TOKEN}")]).name == "ops"
    assert server_credentials(settings.auth) is not None


async def _health(channel: grpc.aio.Channel) -> Any:
    async with channel:
        request = health_pb2.HealthCheckRequest()
        return await health_pb2_grpc.HealthStub(channel).Check(request, timeout=5)


async def test_a_tls_port_refuses_the_plaintext_probe_that_the_health_port_answers(
    tmp_path: Path,
) -> None:
    """Why the chart probes a TLS query service on its health port: the kubelet's gRPC probe
    speaks plaintext, which a TLS port refuses, and the health-only port answers it."""
    cert, key = _self_signed(tmp_path)
    server = GrpcServer(
        "127.0.0.1:0", None, None, credentials=grpc.ssl_server_credentials([(key, cert)])
    )
    health = HealthServer("127.0.0.1:0", server.services)
    await server.start()
    await health.start()
    try:
        target = f"127.0.0.1:{server.port}"
        with pytest.raises(grpc.aio.AioRpcError) as plaintext:
            await _health(grpc.aio.insecure_channel(target))
        assert plaintext.value.code() == grpc.StatusCode.UNAVAILABLE
        probe = await _health(grpc.aio.insecure_channel(f"127.0.0.1:{health.port}"))
        assert probe.status == health_pb2.HealthCheckResponse.SERVING
        options = [("grpc.ssl_target_name_override", "localhost")]
        secure = grpc.aio.secure_channel(target, grpc.ssl_channel_credentials(cert), options)
        reply = await _health(secure)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        await health.stop(grace_s=0)
        await server.stop(grace_s=0)
