"""Listen addresses: checked before use, bound exclusively, and a failed bind said plainly.

grpc takes a port modulo 65536 (`:99999` serves on 34463), and by default sets SO_REUSEPORT,
so a second server on a port already in use starts anyway and the two share the traffic.
`parse_listen` refuses what grpc would misread; `bind` turns SO_REUSEPORT off (servers pass
`SERVER_OPTIONS`) and tries the address with a plain socket first, so the reason for a failure
(in use, not on this machine, unknown host) reaches the user instead of grpc's generic
"Failed to bind" and its log line.
"""

from __future__ import annotations

import re
import socket
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import grpc

SERVER_OPTIONS = (("grpc.so_reuseport", 0),)
"""Options every grpc server of ours takes: one process per port."""
_ADDRESS = re.compile(r"^(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[^\s:\[\]/]+)):(?P<port>\d+)$")


class ListenError(OSError):
    """An address cannot be listened on; the message names it and says why."""


def parse_listen(address: str) -> tuple[str, int]:
    """(host, port) of `host:port` or `[ipv6]:port`, the port from 0 (any free port) to 65535."""
    found = _ADDRESS.match(address)
    if found is None:
        raise ListenError(
            f"cannot listen on {address!r}: give host:port, e.g. 127.0.0.1:50051 or [::1]:50051"
        )
    port = int(found["port"])
    if port > 65535:
        raise ListenError(f"cannot listen on {address}: port {port} is not from 0 to 65535")
    return found["ipv6"] or found["host"], port


def unavailable(host: str, port: int) -> str | None:
    """Why (host, port) cannot be bound right now, or None when it can."""
    try:
        targets = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        return f"unknown host {host!r}"
    reasons: list[str] = []
    for family, kind, protocol, _, address in targets:
        with socket.socket(family, kind, protocol) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpc does
            try:
                probe.bind(address)
            except OSError as exc:
                reasons.append(exc.strerror or str(exc))
            else:
                return None  # grpc serves when at least one resolved address binds
    return reasons[0] if reasons else f"{host!r} resolves to no address"


def check_listen(listen: str) -> None:
    """A ListenError unless `listen` is well formed and can be bound right now."""
    host, port = parse_listen(listen)
    reason = unavailable(host, port)
    if reason is not None:
        hint = ": is another server running on it?" if "in use" in reason else ""
        raise ListenError(f"cannot listen on {listen}: {reason}{hint}")


def bind(server: grpc.aio.Server, listen: str, credentials: grpc.ServerCredentials | None) -> int:
    """Binds `listen` and returns the port; an address that cannot be bound is a ListenError.

    The server must have been made with SERVER_OPTIONS, or a port in use binds anyway."""
    check_listen(listen)
    try:
        bound = (
            server.add_secure_port(listen, credentials)
            if credentials is not None
            else server.add_insecure_port(listen)
        )
    except RuntimeError as exc:  # grpc reports a failed bind as RuntimeError
        raise ListenError(f"cannot listen on {listen}: {exc}") from None
    if bound == 0:
        raise ListenError(f"cannot listen on {listen}")
    return bound
