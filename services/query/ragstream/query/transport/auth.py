"""Authentication and tenancy for the gRPC services: bearer tokens, workspaces, (m)TLS.

A caller sends `authorization: Bearer <token>`. The tokens file maps each token to the
workspaces it may use ("*": all). The file should hold the tokens' SHA-256 digests rather
than the tokens (`sha256 = "..."`), so that reading it grants nothing; a plain `token = "..."`
is accepted for development. Only digests are kept in memory, and a token's `name`, never
the token, appears in logs and errors.

    [[tokens]]
    name = "team-a"
    sha256 = "5e88...42d8"   # sha256sum of the token, hex
    workspaces = ["team-a", "shared"]

TLS is optional and independent of tokens: with `auth.client_ca` the server also requires a
client certificate signed by that CA (mTLS).
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import re
import ssl
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, model_validator

from ragstream.common.config import WORKSPACE_PATTERN, AuthConfig, ConfigError

log = logging.getLogger(__name__)
ALL_WORKSPACES = "*"
_WORKSPACE = re.compile(WORKSPACE_PATTERN)
_SCHEME = "bearer"


class TokenEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[\w.@-]+$")
    sha256: str | None = Field(None, pattern=r"^[0-9a-fA-F]{64}$")
    token: SecretStr | None = None
    workspaces: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_secret(self) -> TokenEntry:
        if (self.sha256 is None) == (self.token is None):
            raise ValueError("give exactly one of sha256 and token")
        for workspace in self.workspaces:
            if workspace != ALL_WORKSPACES and not _matches_workspace(workspace):
                raise ValueError("workspaces must be workspace names or '*'")
        return self

    @property
    def digest(self) -> str:
        if self.sha256 is not None:
            return self.sha256.lower()
        assert self.token is not None
        return token_digest(self.token.get_secret_value())


class TokensFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tokens: tuple[TokenEntry, ...] = Field(min_length=1)


def _matches_workspace(name: str) -> bool:
    return _WORKSPACE.match(name) is not None


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Grant:
    """What one token may do."""

    name: str
    workspaces: frozenset[str]

    @property
    def all_workspaces(self) -> bool:
        return ALL_WORKSPACES in self.workspaces

    def allows(self, workspace: str) -> bool:
        return self.all_workspaces or workspace in self.workspaces


class Unauthenticated(Exception):
    """The call carries no token, or one the server does not know."""


class TokenAuthenticator:
    """Maps the bearer token of a call to its Grant."""

    def __init__(self, grants: Mapping[str, Grant]) -> None:
        self._grants = dict(grants)
        """By SHA-256 digest of the token."""

    @classmethod
    def from_file(cls, path: Path) -> TokenAuthenticator:
        grants: dict[str, Grant] = {}
        for entry in load_tokens(path).tokens:
            if entry.digest in grants:
                raise ConfigError(f"{path}: token {entry.name!r} repeats an earlier token")
            grants[entry.digest] = Grant(entry.name, frozenset(entry.workspaces))
        return cls(grants)

    def __len__(self) -> int:
        return len(self._grants)

    def authenticate(self, metadata: Iterable[tuple[str, Any]] | None) -> Grant:
        token = bearer_token(metadata)
        if token is None:
            raise Unauthenticated("missing 'authorization: Bearer <token>' metadata")
        grant = self._grants.get(token_digest(token))
        if grant is None:
            raise Unauthenticated("unknown bearer token")
        return grant


def bearer_token(metadata: Iterable[tuple[str, Any]] | None) -> str | None:
    for key, value in metadata or ():
        if key.lower() != "authorization" or not isinstance(value, str):
            continue
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() == _SCHEME and token.strip():
            return token.strip()
    return None


def load_tokens(path: Path) -> TokensFile:
    """Reads a TOML or JSON tokens file; errors name the entry, never its secret."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"auth.tokens_file {path}: cannot read ({exc.strerror})") from None
    try:
        data = json.loads(raw) if path.suffix == ".json" else tomllib.loads(raw.decode())
    except (ValueError, UnicodeDecodeError) as exc:
        kind = "JSON" if path.suffix == ".json" else "TOML"
        raise ConfigError(f"auth.tokens_file {path}: not valid {kind} ({exc})") from None
    try:
        return TokensFile.model_validate(data)
    except ValidationError as exc:
        # msg only: pydantic's full text would quote the input, i.e. the token.
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}"
            for error in exc.errors()
        )
        raise ConfigError(f"auth.tokens_file {path}: {problems}") from None


def build_authenticator(cfg: AuthConfig) -> TokenAuthenticator | None:
    if not cfg.enabled:
        return None
    assert cfg.tokens_file is not None  # AuthConfig requires it when enabled
    authenticator = TokenAuthenticator.from_file(cfg.tokens_file)
    log.info("auth: bearer tokens required (%d tokens)", len(authenticator))
    return authenticator


def server_credentials(cfg: AuthConfig) -> grpc.ServerCredentials | None:
    """TLS credentials when a certificate is configured; mTLS when a client CA is too."""
    if cfg.tls_cert is None or cfg.tls_key is None:
        return None
    cert, key = _read(cfg.tls_cert, "tls_cert"), _read(cfg.tls_key, "tls_key")
    ca = _read(cfg.client_ca, "client_ca") if cfg.client_ca is not None else None
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=ca, require_client_auth=ca is not None
    )


def server_ssl_context(cfg: AuthConfig) -> ssl.SSLContext | None:
    """The same TLS (and mTLS) for the HTTP port as `server_credentials` gives gRPC."""
    if cfg.tls_cert is None or cfg.tls_key is None:
        return None
    for path, setting in ((cfg.tls_cert, "tls_cert"), (cfg.tls_key, "tls_key")):
        _read(path, setting)  # a missing file stops startup with the setting's name
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cfg.tls_cert, cfg.tls_key)
    if cfg.client_ca is not None:
        context.load_verify_locations(cadata=_read(cfg.client_ca, "client_ca").decode())
        context.verify_mode = ssl.CERT_REQUIRED
    return context


def _read(path: Path, setting: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"auth.{setting} {path}: cannot read ({exc.strerror})") from None


def is_loopback(host: str) -> bool:
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # any other name may resolve beyond this machine


def exposed_without_auth(listen: str, cfg: AuthConfig) -> bool:
    """Whether `listen` accepts connections from other machines while no caller is checked
    (neither tokens nor client certificates)."""
    host = listen.rpartition(":")[0]
    return not (cfg.enabled or cfg.client_ca is not None or is_loopback(host))


def warn_if_exposed(listen: str, cfg: AuthConfig) -> None:
    if exposed_without_auth(listen, cfg):
        log.warning(
            "listening on %s beyond loopback with authentication off: any client that can "
            "reach this address can read and change every workspace; set auth.enabled "
            "(RAGSTREAM_AUTH__ENABLED=true) with auth.tokens_file",
            listen,
        )
