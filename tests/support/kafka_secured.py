"""The test broker's secured listeners and the client settings that open them.

Besides PLAINTEXT, the test broker listens on
- SASL_SSL: SCRAM-SHA-512 (the user is created by the broker's own tooling, `kafka-storage
  format --add-scram`, before the first start) and OAUTHBEARER (Kafka's built-in validator of
  unsecured JWTs, so a test can mint its own tokens);
- SSL with `ssl.client.auth=required`: only clients presenting a certificate of the test CA
  get in;
- SASL_PLAINTEXT: SCRAM-SHA-256, with no user until a test creates one (kafka_scram.py).
  Its sessions expire after REAUTH_MS: aiokafka does not re-authenticate, so the broker
  closes its connections then and the client logs in again, with the credentials it was
  built with; a rotated password therefore locks out a client that was not rebuilt.
Both use the PKI of kafka_tls.py, made fresh for each broker. `KafkaListener` is one way in:
its address and the `bus.kafka_security` settings a client needs, as settings, as aiokafka
options or as the environment of a `ragstream` process.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragstream.common.bus.kafka_security import KafkaOptions, kafka_options
from ragstream.common.config import BusConfig
from ragstream.common.config_kafka import KafkaSecurityConfig
from tests.support.kafka_tls import CLIENT_KEY_PASSWORD, TestPki, make_pki

SCRAM_USER = "ragstream-indexer"
SCRAM_PASSWORD = "scram-pass-7d41c2"
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
OAUTH_JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
REAUTH_MS = 3000


@dataclass(frozen=True, slots=True)
class KafkaListener:
    """One listener of the test broker and the client settings it requires."""

    bootstrap: str
    security: KafkaSecurityConfig = field(default_factory=KafkaSecurityConfig)

    def bus(self, **fields: Any) -> BusConfig:
        return BusConfig(
            backend="kafka", kafka_bootstrap=self.bootstrap, kafka_security=self.security, **fields
        )

    def options(self) -> KafkaOptions:
        return kafka_options(self.bus())

    def client(self, **extra: Any) -> dict[str, Any]:
        """Keyword arguments of an aiokafka client on this listener."""
        return self.options().client(**extra)

    def env(self) -> dict[str, str]:
        """The RAGSTREAM_BUS__* variables of a process on this listener."""
        variables = {"RAGSTREAM_BUS__KAFKA_BOOTSTRAP": self.bootstrap}
        defaults = KafkaSecurityConfig()
        for name in KafkaSecurityConfig.model_fields:
            value = getattr(self.security, name)
            if value == getattr(defaults, name):
                continue
            text = value.get_secret_value() if hasattr(value, "get_secret_value") else value
            text = str(text).lower() if isinstance(text, bool) else str(text)
            variables[f"RAGSTREAM_BUS__KAFKA_SECURITY__{name.upper()}"] = text
        return variables


def unsecured_jwt(subject: str, lifetime_s: int = 3600) -> str:
    """An unsigned JWT (alg "none"), which Kafka's default OAUTHBEARER validator accepts."""

    def part(claims: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")

    now = int(time.time())
    return f"{part({'alg': 'none'})}.{part({'sub': subject, 'iat': now, 'exp': now + lifetime_s})}."


@dataclass(frozen=True, slots=True)
class SecuredListeners:
    """The SASL_SSL and mutual-TLS listeners of one broker."""

    pki: TestPki
    sasl_port: int
    tls_port: int
    scram_port: int
    """SASL_PLAINTEXT, SCRAM-SHA-256."""

    @classmethod
    def create(
        cls, workdir: Path, sasl_port: int, tls_port: int, scram_port: int
    ) -> SecuredListeners:
        return cls(make_pki(workdir / "pki"), sasl_port, tls_port, scram_port)

    def apply(self, settings: dict[str, str]) -> dict[str, str]:
        """`settings` (server.properties) with both listeners added."""
        added = (
            f"SASL_SSL://127.0.0.1:{self.sasl_port},SSL://127.0.0.1:{self.tls_port},"
            f"SASL_PLAINTEXT://127.0.0.1:{self.scram_port}"
        )
        return {
            **settings,
            "listeners": f"{settings['listeners']},{added}",
            "advertised.listeners": f"{settings['advertised.listeners']},{added}",
            "listener.security.protocol.map": (
                f"{settings['listener.security.protocol.map']},SASL_SSL:SASL_SSL,SSL:SSL,"
                "SASL_PLAINTEXT:SASL_PLAINTEXT"
            ),
            "listener.name.sasl_ssl.sasl.enabled.mechanisms": "SCRAM-SHA-512,OAUTHBEARER",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
            "listener.name.sasl_ssl.oauthbearer.sasl.jaas.config": OAUTH_JAAS,
            "listener.name.sasl_plaintext.sasl.enabled.mechanisms": "SCRAM-SHA-256",
            "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
            "listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms": str(REAUTH_MS),
            "listener.name.ssl.ssl.client.auth": "required",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(self.pki.broker),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(self.pki.ca),
        }

    def format_arguments(self) -> list[str]:
        """`kafka-storage format` arguments that create the SCRAM user."""
        return ["--add-scram", f"SCRAM-SHA-512=[name={SCRAM_USER},password={SCRAM_PASSWORD}]"]

    def sasl_ssl(self, **security: Any) -> KafkaListener:
        """SCRAM-SHA-512 over TLS with the test CA; `security` overrides settings."""
        settings: dict[str, Any] = {
            "protocol": "SASL_SSL",
            "ca_file": self.pki.ca,
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": SCRAM_USER,
            "sasl_password": SCRAM_PASSWORD,
            **security,
        }
        return KafkaListener(
            f"127.0.0.1:{self.sasl_port}", KafkaSecurityConfig.model_validate(settings)
        )

    def mutual_tls(self, **security: Any) -> KafkaListener:
        """TLS with the client certificate (its key encrypted); `security` overrides."""
        settings: dict[str, Any] = {
            "protocol": "SSL",
            "ca_file": self.pki.ca,
            "cert_file": self.pki.client_cert,
            "key_file": self.pki.client_key,
            "key_password": CLIENT_KEY_PASSWORD,
            **security,
        }
        return KafkaListener(
            f"127.0.0.1:{self.tls_port}", KafkaSecurityConfig.model_validate(settings)
        )

    def sasl_plaintext(self, username: str, password_file: Path) -> KafkaListener:
        """SCRAM-SHA-256 without TLS, the password read from `password_file`."""
        security = KafkaSecurityConfig(
            protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-256",
            sasl_username=username,
            sasl_password_file=password_file,
        )
        return KafkaListener(f"127.0.0.1:{self.scram_port}", security)
