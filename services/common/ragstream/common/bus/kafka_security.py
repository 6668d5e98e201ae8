"""The connection options every aiokafka client of the bus shares: bootstrap, TLS, SASL.

`kafka_options(bus)` is built once per process from `bus.kafka_security`; the producer, the
consumers, the admin client and the progress reader all take it, so one setting secures them
all. The TLS context verifies the brokers' chain (bus.kafka_security.ca_file, or the system's
CAs) and, unless told otherwise, their host name. The secrets are read out of their SecretStr
only here, into the options object, whose repr shows none of them. A PLAIN or SCRAM login
is asked of its LoginSource (kafka_login.py) whenever a client is built, so a client built
after a password file changed uses the new password.

When a connection fails, `connection_problem` connects once more to the first bootstrap
broker, which tells the actual reason (aiokafka's bootstrap reports only that it failed), and
names the setting to check.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka.abc import AbstractTokenProvider
from aiokafka.conn import create_conn
from aiokafka.errors import KafkaError, SaslAuthenticationFailed, UnsupportedSaslMechanismError

from ragstream.common.bus.kafka_login import LoginSource, SaslLogin
from ragstream.common.config import BusConfig, ConfigError
from ragstream.common.config_kafka import SETTING, KafkaSecurityConfig

DIAGNOSE_TIMEOUT_MS = 10_000


class TokenFileProvider(AbstractTokenProvider):  # type: ignore[misc]
    """OAUTHBEARER tokens read from a file at every authentication (it may be refreshed)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    async def token(self) -> str:
        text = await asyncio.to_thread(self._path.read_text)
        token = text.strip()
        if not token:
            raise OSError(f"{SETTING}.oauth_token_file {self._path} is empty")
        return token


@dataclass(frozen=True, slots=True)
class KafkaOptions:
    """What an aiokafka client needs to reach the cluster; the secrets stay out of repr."""

    bootstrap: str
    protocol: str = "PLAINTEXT"
    security: dict[str, Any] = field(default_factory=dict, repr=False)
    """security_protocol, ssl_context and sasl_* keyword arguments of aiokafka's clients,
    but for the PLAIN or SCRAM login, which `login` gives when a client is built."""
    login: LoginSource | None = field(default=None, repr=False)

    def client(self, **extra: Any) -> dict[str, Any]:
        """Keyword arguments for AIOKafkaProducer, AIOKafkaConsumer or AIOKafkaAdminClient,
        with the login as it is now."""
        return {"bootstrap_servers": self.bootstrap, **self.connection(), **extra}

    def connection(self) -> dict[str, Any]:
        """`security` and the current login."""
        if self.login is None:
            return dict(self.security)
        return {**self.security, **self.login.current().options()}

    def current_login(self) -> SaslLogin | None:
        """What a client built now would log in with; a client built with another login
        should be rebuilt (the password was rotated)."""
        return None if self.login is None else self.login.current()

    def login_settings(self) -> str:
        """The settings giving the login, to name in messages."""
        return f"{SETTING}.sasl_password" if self.login is None else self.login.settings()

    def first_broker(self) -> tuple[str, int]:
        host, _, port = self.bootstrap.split(",")[0].strip().rpartition(":")
        return host.strip("[]") or "localhost", int(port or 9092)


def kafka_options(bus: BusConfig) -> KafkaOptions:
    """The options of `bus.kafka_bootstrap` and `bus.kafka_security`; a ConfigError naming
    the setting when a certificate or key file cannot be used."""
    cfg = bus.kafka_security
    security: dict[str, Any] = {"security_protocol": cfg.protocol}
    login = None
    if cfg.tls:
        security["ssl_context"] = tls_context(cfg)
    if cfg.sasl:
        security["sasl_mechanism"] = cfg.sasl_mechanism
        if cfg.sasl_mechanism == "OAUTHBEARER":
            assert cfg.oauth_token_file is not None  # the config requires it
            security["sasl_oauth_token_provider"] = TokenFileProvider(cfg.oauth_token_file)
        else:
            login = LoginSource.of(cfg)
    return KafkaOptions(bus.kafka_bootstrap, cfg.protocol, security, login)


def tls_context(cfg: KafkaSecurityConfig) -> ssl.SSLContext:
    try:
        context = ssl.create_default_context(cafile=cfg.ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"{SETTING}.ca_file {cfg.ca_file}: not a readable PEM CA bundle ({exc})"
        ) from None
    context.check_hostname = cfg.check_hostname
    if cfg.cert_file is not None and cfg.key_file is not None:
        password = cfg.key_password.get_secret_value() or None
        try:
            context.load_cert_chain(cfg.cert_file, cfg.key_file, password=password)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(
                f"{SETTING}.cert_file {cfg.cert_file} / key_file {cfg.key_file}: cannot load "
                f"the client certificate and key ({exc}; an encrypted key needs "
                f"{SETTING}.key_password)"
            ) from None
    return context


async def connection_problem(options: KafkaOptions) -> str:
    """Why a connection to the first bootstrap broker fails, naming the setting to check;
    empty when it succeeds."""
    host, port = options.first_broker()
    arguments = {"request_timeout_ms": DIAGNOSE_TIMEOUT_MS, **options.connection()}
    try:
        conn = await create_conn(host, port, **arguments)
    except (SaslAuthenticationFailed, UnsupportedSaslMechanismError, ssl.SSLError) as exc:
        return rejection(exc, options)
    except (OSError, TimeoutError, KafkaError) as exc:
        return unreachable(exc, f"{host}:{port}", options.protocol)
    conn.close()
    return ""


def rejection(exc: Exception, options: KafkaOptions) -> str:
    """The broker answered and refused: credentials, mechanism or TLS."""
    if isinstance(exc, SaslAuthenticationFailed):
        if options.security.get("sasl_mechanism") == "OAUTHBEARER":
            return f"Kafka refused the OAUTHBEARER token ({exc}): check {SETTING}.oauth_token_file"
        return f"Kafka refused the SASL credentials ({exc}): check {options.login_settings()}"
    if isinstance(exc, UnsupportedSaslMechanismError):
        return f"{exc}: check {SETTING}.sasl_mechanism"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (
            f"the broker's certificate is not trusted ({exc.verify_message}): check "
            f"{SETTING}.ca_file and {SETTING}.check_hostname"
        )
    return (
        f"the TLS handshake failed ({exc}): brokers that require client certificates need "
        f"{SETTING}.cert_file and key_file; a listener without TLS needs a protocol other "
        f"than {options.protocol}"
    )


def unreachable(exc: BaseException, address: str, protocol: str) -> str:
    """No answer, or the connection was dropped before the broker said why."""
    reason = str(exc) or type(exc).__name__
    hint = f"check bus.kafka_bootstrap and that the listener speaks {SETTING}.protocol {protocol}"
    if protocol in ("SSL", "SASL_SSL"):
        hint += f" (a broker requiring client certificates also needs {SETTING}.cert_file)"
    return f"cannot talk to Kafka at {address} ({reason}): {hint}"
