import socket

import grpc
import pytest

from ragstream.common.listen import SERVER_OPTIONS, ListenError, bind, parse_listen


@pytest.mark.parametrize(
    ("address", "parsed"),
    [("127.0.0.1:50051", ("127.0.0.1", 50051)), ("[::1]:0", ("::1", 0)),
     ("localhost:65535", ("localhost", 65535)), ("0.0.0.0:8081", ("0.0.0.0", 8081))],
)  # fmt: skip
def test_host_port_forms_are_read(address: str, parsed: tuple[str, int]) -> None:
    assert parse_listen(address) == parsed


@pytest.mark.parametrize(
    ("address", "reason"),
    [("127.0.0.1:99999", "not from 0 to 65535"), ("127.0.0.1:-1", "host:port"),
     ("nonsense", "host:port"), (":50051", "host:port"), ("unix:/tmp/s", "host:port"),
     ("::1:50051", "host:port")],
)  # fmt: skip
def test_what_grpc_would_misread_is_refused(address: str, reason: str) -> None:
    with pytest.raises(ListenError, match=reason):
        parse_listen(address)


async def test_a_port_in_use_is_refused_with_the_reason() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        server = grpc.aio.server(options=SERVER_OPTIONS)
        with pytest.raises(ListenError, match="in use"):
            bind(server, f"127.0.0.1:{port}", None)


async def test_a_second_grpc_server_cannot_share_a_port() -> None:
    first = grpc.aio.server(options=SERVER_OPTIONS)
    port = bind(first, "127.0.0.1:0", None)
    await first.start()
    try:
        with pytest.raises(ListenError, match="in use"):
            bind(grpc.aio.server(options=SERVER_OPTIONS), f"127.0.0.1:{port}", None)
    finally:
        await first.stop(None)


async def test_an_unknown_host_is_named() -> None:
    with pytest.raises(ListenError, match="unknown host"):
        bind(grpc.aio.server(options=SERVER_OPTIONS), "no-such-host.invalid:0", None)


def test_a_configured_listen_address_is_checked_the_same_way() -> None:
    from ragstream.common.config import ConfigError, load_settings

    with pytest.raises(ConfigError, match=r"server\.listen .*not from 0 to 65535"):
        load_settings(server={"listen": "127.0.0.1:99999"})
    assert load_settings(server={"listen": "[::1]:50051"}).server.listen == "[::1]:50051"
