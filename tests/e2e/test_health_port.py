"""`serve --health-listen`: under TLS the gRPC port refuses plaintext, while the health port
answers the kubelet's kind of probe (plaintext grpc.health.v1, no token) and serves nothing
else; SIGTERM ends both."""

from __future__ import annotations

import os
from collections.abc import Iterator

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ragstream.query.transport.auth import token_digest
from ragstream.v1 import query_pb2, query_pb2_grpc
from tests.support.kafka_tls import make_pki
from tests.support.server import RagstreamProcess, free_port

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RagstreamProcess, str]]:
    root = tmp_path_factory.mktemp("health-port")
    pki = make_pki(root / "pki")
    tokens = root / "tokens.toml"
    digest = token_digest("tok-health-81c2")
    tokens.write_text(f'[[tokens]]\nname = "t"\nsha256 = "{digest}"\nworkspaces = ["*"]\n')
    env = {
        **os.environ,
        "RAGSTREAM_EMBEDDING__PROVIDER": "hash",
        "RAGSTREAM_AUTH__ENABLED": "true",
        "RAGSTREAM_AUTH__TOKENS_FILE": str(tokens),
        "RAGSTREAM_AUTH__TLS_CERT": str(pki.server_cert),
        "RAGSTREAM_AUTH__TLS_KEY": str(pki.server_key),
    }
    main = f"127.0.0.1:{free_port()}"
    args = ("serve", "--data-dir", str(root / "data"), "--listen", main, "--health-listen")
    # Started means the health port (the process's `address`) answers SERVING in plaintext.
    process = RagstreamProcess(env, root / "serve.log", *args).start()
    try:
        yield process, main
    finally:
        process.stop()


def check(address: str, service: str = "") -> int:
    with grpc.insecure_channel(address) as channel:
        request = health_pb2.HealthCheckRequest(service=service)
        return int(health_pb2_grpc.HealthStub(channel).Check(request, timeout=5).status)


def test_the_health_port_answers_plaintext_probes(served: tuple[RagstreamProcess, str]) -> None:
    process, _ = served
    assert check(process.address) == health_pb2.HealthCheckResponse.SERVING
    query_service = "ragstream.v1.QueryService"
    assert check(process.address, query_service) == health_pb2.HealthCheckResponse.SERVING


def test_the_tls_port_refuses_plaintext(served: tuple[RagstreamProcess, str]) -> None:
    _, main = served
    with pytest.raises(grpc.RpcError) as refused:
        check(main)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_the_health_port_serves_nothing_else(served: tuple[RagstreamProcess, str]) -> None:
    process, _ = served
    with grpc.insecure_channel(process.address) as channel, pytest.raises(grpc.RpcError) as caught:
        query_pb2_grpc.QueryServiceStub(channel).Query(query_pb2.QueryRequest(query="q"), timeout=5)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_sigterm_stops_both_ports(served: tuple[RagstreamProcess, str]) -> None:
    process, main = served
    code, seconds = process.terminate()
    assert code == 0 and seconds < 20, process.log()
    assert "Traceback" not in process.log()
    for address in (process.address, main):
        with pytest.raises(grpc.RpcError):
            check(address)
