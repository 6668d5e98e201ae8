"""How ragstream's Kafka clients authenticate and encrypt: `bus.kafka_security`.

One section serves the producer, the consumers and the admin client alike. The protocol
names are Kafka's own: PLAINTEXT, SSL (TLS, with a client certificate when the brokers
require one), SASL_PLAINTEXT and SASL_SSL (SASL over TLS: the one to use beyond a trusted
network). Secrets are SecretStr: they never appear in a repr, a log line or an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, SecretStr, model_validator

TLS_PROTOCOLS = ("SSL", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
SETTING = "bus.kafka_security"


class KafkaSecurityConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = "PLAINTEXT"
    """Kafka's security.protocol."""
    ca_file: Path | None = None
    """PEM bundle of the CAs that signed the brokers' certificates (SSL, SASL_SSL); unset:
    the system's CAs (public brokers such as managed clouds)."""
    cert_file: Path | None = None
    """PEM client certificate (chain), for brokers that require client certificates."""
    key_file: Path | None = None
    """PEM private key of cert_file."""
    key_password: SecretStr = SecretStr("")
    """Password of an encrypted key_file; empty: the key is not encrypted."""
    check_hostname: bool = True
    """Require the broker certificate to name the host connected to. Turn off only for
    brokers reached by an address their certificate does not list; the chain is still
    verified."""
    sasl_mechanism: Literal["", "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"] = ""
    """Required with SASL_PLAINTEXT and SASL_SSL."""
    sasl_username: str = ""
    """PLAIN and SCRAM user (or sasl_username_file)."""
    sasl_password: SecretStr = SecretStr("")
    """PLAIN and SCRAM password (or sasl_password_file)."""
    sasl_username_file: Path | None = None
    """A file holding the PLAIN or SCRAM user, instead of sasl_username."""
    sasl_password_file: Path | None = None
    """A file holding the PLAIN or SCRAM password, instead of sasl_password. The files are
    read when a client connects and watched afterwards: a rotated password (a Secret mount
    updates in place) reconnects the running clients with it, without a restart."""
    oauth_token_file: Path | None = None
    """OAUTHBEARER: a file holding the access token (a JWT), read again at every
    authentication, so whatever refreshes it (a sidecar, a projected volume) is followed."""

    @property
    def tls(self) -> bool:
        return self.protocol in TLS_PROTOCOLS

    @property
    def sasl(self) -> bool:
        return self.protocol in SASL_PROTOCOLS

    @model_validator(mode="after")
    def _consistent(self) -> KafkaSecurityConfig:
        problems = [*self._tls_problems(), *self._sasl_problems()]
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _tls_problems(self) -> list[str]:
        files = {"ca_file": self.ca_file, "cert_file": self.cert_file, "key_file": self.key_file}
        if not self.tls:
            return [
                f"{SETTING}.{name} needs protocol SSL or SASL_SSL, not {self.protocol}"
                for name, value in files.items()
                if value is not None
            ]
        problems = []
        if (self.cert_file is None) != (self.key_file is None):
            problems.append(f"{SETTING}.cert_file and {SETTING}.key_file must be set together")
        if self.key_password.get_secret_value() and self.key_file is None:
            problems.append(f"{SETTING}.key_password needs {SETTING}.key_file")
        return problems

    def _sasl_problems(self) -> list[str]:
        mechanism = self.sasl_mechanism
        login_files = self.sasl_username_file or self.sasl_password_file
        if login_files and mechanism not in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
            return [f"{SETTING}.sasl_username_file and sasl_password_file need PLAIN or SCRAM"]
        if not self.sasl:
            wrong = bool(mechanism)
            problem = f"{SETTING}.sasl_mechanism needs protocol SASL_PLAINTEXT or SASL_SSL"
        elif not mechanism:
            wrong = True
            problem = f"{SETTING}.sasl_mechanism is required with protocol {self.protocol}"
        elif mechanism == "OAUTHBEARER":
            wrong = self.oauth_token_file is None
            problem = f"{SETTING}.oauth_token_file is required with OAUTHBEARER"
        else:
            return self._login_problems()
        return [problem] if wrong else []

    def _login_problems(self) -> list[str]:
        """PLAIN and SCRAM: a user and a password, each given once, as a value or a file."""
        problems = []
        pairs = (
            ("sasl_username", bool(self.sasl_username), self.sasl_username_file),
            ("sasl_password", bool(self.sasl_password.get_secret_value()), self.sasl_password_file),
        )
        for name, given, file in pairs:
            if given and file is not None:
                problems.append(f"{SETTING}.{name} and {name}_file: set one, not both")
            elif not given and file is None:
                problems.append(
                    f"{SETTING}.{name} (or {name}_file) is required with {self.sasl_mechanism}"
                )
        return problems
