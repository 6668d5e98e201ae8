"""What browsers may do with the HTTP port: only what the console, or a configured CORS
origin, asks, whatever other page the browser is showing.

With auth off, nothing but the browser's same-origin policy stands between another site's
page and the port, and that policy lets any page send "simple" requests (a form post, a
`text/plain` or `no-cors` fetch) without asking the server first; it only hides the answer.
So three checks refuse what such a page can send, each enough on its own against forged
writes, layered so that a proxy that drops one header does not open the port:

- Host names this server: an IP address, `localhost`, the listen host, or a name in
  `server.http_allowed_hosts`, else 403. A DNS-rebinding page reaches the port under the
  attacker's own domain name, which fails here; an IP address cannot be rebound.
- Origin, when sent, is the port itself or a CORS origin, else 403. Browsers send it on
  every cross-origin request and on every POST; clients that are not browsers (curl, SDKs)
  send none, and pass.
- A POST says `Content-Type: application/json`, else 415: a page sends that type to another
  origin only after a CORS preflight, which only the CORS origins pass.

The upload route (`upload.py`) is the one exception, deliberately narrow: it takes
`multipart/form-data`, the type of a form post, which any page may send anywhere without a
preflight. So it takes it only with an `X-Ragstream-Upload` header (any value), which no
form can send and which a page's fetch sends to another origin only after a preflight that
no origin passes (the header is not among the CORS allowed headers); and when an Origin is
sent it must be the port itself, a CORS origin included: uploads come from the console or
from clients that are not browsers. Either check alone stops a forged upload.

Every response also carries headers that keep pages from framing the console or sniffing a
type into an answer, and a Content-Security-Policy under which the console runs only its own
script and style files (no inline script, nothing from elsewhere).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from aiohttp import hdrs, web
from aiohttp.typedefs import Middleware
from google.rpc import code_pb2

from ragstream.query.transport.http.middleware import API_PREFIX, Handler
from ragstream.query.transport.http.status import status_response
from ragstream.query.transport.http.upload import UPLOAD_HEADER, UPLOAD_PATH

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",  # frame-ancestors' predecessor, for browsers without CSP 2
    "Referrer-Policy": "no-referrer",
}
JSON = "application/json"
MULTIPART = "multipart/form-data"
_HOST = re.compile(r"^(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<name>[^\s:\[\]/@]+))(?::\d{1,5})?$")


def hostname(host: str) -> str | None:
    """The name or address of a Host header (`name`, `name:port`, `[v6]:port`), lower
    case and without a trailing dot; None when it is not one."""
    found = _HOST.match(host.strip())
    if found is None:
        return None
    return (found["ipv6"] or found["name"]).rstrip(".").lower()


def is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class Hosts:
    """The names the Host header may give: exact names, `.domain` suffixes (the domain and
    every name under it), or anything at all with "*"."""

    names: frozenset[str]
    domains: tuple[str, ...] = ()
    anything: bool = False

    @classmethod
    def of(cls, listen_host: str, allowed: Sequence[str] = ()) -> Hosts:
        entries = [e.strip().rstrip(".").lower() for e in allowed]
        names = {e for e in entries if not e.startswith(".")} | {"localhost", listen_host.lower()}
        domains = tuple(e for e in entries if e.startswith("."))
        return cls(frozenset(names), domains, "*" in entries)

    def allow(self, host: str) -> bool:
        name = hostname(host)
        if name is None:
            return False
        if self.anything or name in self.names or is_address(name):
            return True
        return any(name.endswith(d) or name == d[1:] for d in self.domains)


def same_origin(origin: str, host: str | None) -> bool:
    """Whether `origin` is the port the request reached (its Host), whatever the scheme:
    behind a proxy that ends TLS the port speaks http to pages served over https."""
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if host is None or parts.scheme not in ("http", "https"):
        return False
    return parts.netloc.lower() == host.strip().lower()


def guard(hosts: Hosts, cors_origins: Sequence[str]) -> Middleware:
    """The middleware refusing requests a browser could have been made to send."""
    origins = frozenset(cors_origins)

    def refusal(request: web.Request) -> web.Response | None:
        host = request.headers.get(hdrs.HOST)
        if host is not None and not hosts.allow(host):
            return status_response(
                403,
                code_pb2.PERMISSION_DENIED,
                "the Host header does not name this server: use its address, localhost, "
                "or a name listed in server.http_allowed_hosts",
            )
        if not request.path.startswith(API_PREFIX):
            return None
        origin = request.headers.get(hdrs.ORIGIN)
        if origin is not None and not ({"*", origin} & origins or same_origin(origin, host)):
            return status_response(
                403,
                code_pb2.PERMISSION_DENIED,
                "pages of other origins may not call this port: the Origin header is "
                "neither this port nor one of server.http_cors_origins",
            )
        routed = request.match_info.http_exception is None
        return body_refusal(request, origin, host) if routed else None

    @web.middleware
    async def guarded(request: web.Request, handler: Handler) -> web.StreamResponse:
        return refusal(request) or await handler(request)

    return guarded


def body_refusal(request: web.Request, origin: str | None, host: str | None) -> web.Response | None:
    """A POST's body type: JSON, except on the upload route (module docstring)."""
    if request.method != hdrs.METH_POST:
        return None
    if request.path == UPLOAD_PATH:
        return upload_refusal(request, origin, host)
    return unsupported(JSON) if request.content_type != JSON else None


def unsupported(media_type: str) -> web.Response:
    return status_response(
        415,
        code_pb2.INVALID_ARGUMENT,  # google.rpc has no code of its own for a media type
        f"a POST body to this route must be sent as Content-Type: {media_type}",
    )


def upload_refusal(
    request: web.Request, origin: str | None, host: str | None
) -> web.Response | None:
    """The upload route's rules (module docstring): a form body, the header, no other origin."""
    if request.content_type != MULTIPART:
        return unsupported(MULTIPART)
    if origin is not None and not same_origin(origin, host):
        return status_response(
            403,
            code_pb2.PERMISSION_DENIED,
            "uploads come from this port's own console only: the Origin header is another",
        )
    if UPLOAD_HEADER not in request.headers:
        return status_response(
            403,
            code_pb2.PERMISSION_DENIED,
            f"an upload must carry the {UPLOAD_HEADER} header (any value), which a form "
            "on another site cannot send",
        )
    return None


async def add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """on_response_prepare: every answer, files, JSON and event streams alike."""
    response.headers.update(SECURITY_HEADERS)
