"""TLS and mTLS on the server that `serve` builds, with certificates made by openssl."""

import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ragstream.common.config import load_settings
from ragstream.common.registry import open_backends
from ragstream.query.main import build_server
from ragstream.query.transport.auth import token_digest
from ragstream.query.transport.server import GrpcServer
from ragstream.v1 import query_pb2, query_pb2_grpc

pytestmark = pytest.mark.e2e
TOKEN = "tok-tls-6a0e11"


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def issue(cwd: Path, name: str, ca: str, extensions: str) -> None:
    """A P-256 key and a certificate for it, signed by `ca` (its .pem and .key in cwd)."""
    key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl(
        "req",
        *key,
        "-keyout",
        f"{name}.key",
        "-out",
        f"{name}.csr",
        "-subj",
        f"/CN={name}",
        cwd=cwd,
    )
    (cwd / f"{name}.ext").write_text(extensions)
    openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-out", f"{name}.pem", "-days", "1", "-extfile", f"{name}.ext",
        cwd=cwd,
    )  # fmt: skip


def make_ca(cwd: Path, name: str) -> None:
    key = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl(
        "req", "-x509", *key, "-keyout", f"{name}.key", "-out", f"{name}.pem",
        "-days", "1", "-subj", f"/CN={name}", cwd=cwd,
    )  # fmt: skip


@dataclass
class Pki:
    root: Path

    def read(self, name: str) -> bytes:
        return (self.root / name).read_bytes()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    root = tmp_path_factory.mktemp("pki")
    make_ca(root, "ca")
    make_ca(root, "stranger-ca")
    issue(root, "server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    issue(root, "client", "ca", "extendedKeyUsage=clientAuth\n")
    issue(root, "stranger", "stranger-ca", "extendedKeyUsage=clientAuth\n")
    return Pki(root)


async def start(tmp_path: Path, pki: Pki, mtls: bool) -> AsyncIterator[GrpcServer]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\nname = "t"\nsha256 = "{token_digest(TOKEN)}"\nworkspaces = ["*"]\n'
    )
    auth = {
        "enabled": True,
        "tokens_file": str(tokens),
        "tls_cert": str(pki.root / "server.pem"),
        "tls_key": str(pki.root / "server.key"),
        **({"client_ca": str(pki.root / "ca.pem")} if mtls else {}),
    }
    settings = load_settings(data_dir=tmp_path / "data", embedding={"provider": "hash"}, auth=auth)
    async with open_backends(settings) as backends:
        server = build_server(settings, backends, "127.0.0.1:0")
        await server.start()
        try:
            yield server
        finally:
            await server.stop(grace_s=1.0)


@pytest.fixture
async def tls_server(tmp_path: Path, pki: Pki) -> AsyncIterator[GrpcServer]:
    async for server in start(tmp_path, pki, mtls=False):
        yield server


@pytest.fixture
async def mtls_server(tmp_path: Path, pki: Pki) -> AsyncIterator[GrpcServer]:
    async for server in start(tmp_path, pki, mtls=True):
        yield server


async def health(channel: grpc.aio.Channel) -> grpc.StatusCode:
    try:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(), timeout=5
        )
    except grpc.aio.AioRpcError as error:
        return error.code()
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    return grpc.StatusCode.OK


def secure(server: GrpcServer, pki: Pki, client: str | None) -> grpc.aio.Channel:
    credentials = grpc.ssl_channel_credentials(
        root_certificates=pki.read("ca.pem"),
        private_key=pki.read(f"{client}.key") if client else None,
        certificate_chain=pki.read(f"{client}.pem") if client else None,
    )
    return grpc.aio.secure_channel(f"127.0.0.1:{server.port}", credentials)


async def test_tls_serves_clients_that_trust_the_server(tls_server: GrpcServer, pki: Pki) -> None:
    async with secure(tls_server, pki, client=None) as channel:
        assert await health(channel) == grpc.StatusCode.OK
    async with grpc.aio.insecure_channel(f"127.0.0.1:{tls_server.port}") as plain:
        assert await health(plain) == grpc.StatusCode.UNAVAILABLE


async def test_mtls_requires_a_certificate_from_the_client_ca(
    mtls_server: GrpcServer, pki: Pki
) -> None:
    async with secure(mtls_server, pki, client="client") as channel:
        assert await health(channel) == grpc.StatusCode.OK
        stub = query_pb2_grpc.QueryServiceStub(channel)
        request = query_pb2.RetrieveRequest(workspace="w", query="anything")
        reply = await stub.Retrieve(request, metadata=(("authorization", f"Bearer {TOKEN}"),))
        assert list(reply.context.chunks) == []
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Retrieve(request)  # the certificate does not replace the token
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    for client in (None, "stranger"):
        async with secure(mtls_server, pki, client=client) as channel:
            assert await health(channel) == grpc.StatusCode.UNAVAILABLE
