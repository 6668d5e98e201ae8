"""bus.kafka_security: each inconsistent combination is refused naming the setting, the
aiokafka options follow the protocol, and no secret shows in a repr or an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragstream.common.bus.kafka_security import kafka_options
from ragstream.common.config import ConfigError, load_settings
from tests.support.kafka_tls import CLIENT_KEY_PASSWORD, make_pki

SECRET = "pw-never-shown-4411"


def settings(**security: Any) -> Any:
    return load_settings(bus={"backend": "kafka", "kafka_security": security})


@pytest.mark.parametrize(
    ("security", "message"),
    [
        ({"protocol": "SASL_SSL"}, "sasl_mechanism is required"),
        ({"sasl_mechanism": "PLAIN"}, "sasl_mechanism needs protocol SASL_PLAINTEXT"),
        ({"protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512"}, "sasl_username .or"),
        (
            {
                "protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "PLAIN",
                "sasl_username": "u",
                "sasl_password": SECRET,
                "sasl_password_file": "/run/pw",
            },
            "sasl_password and sasl_password_file: set one, not both",
        ),
        (
            {
                "protocol": "SASL_SSL",
                "sasl_mechanism": "OAUTHBEARER",
                "oauth_token_file": "/t",
                "sasl_password_file": "/run/pw",
            },
            "sasl_password_file need PLAIN or SCRAM",
        ),
        ({"protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER"}, "oauth_token_file is"),
        ({"ca_file": "/ca.pem"}, "ca_file needs protocol SSL or SASL_SSL"),
        ({"protocol": "SSL", "cert_file": "/c.pem"}, "cert_file and"),
        ({"protocol": "SSL", "key_password": SECRET}, "key_password needs"),
        ({"protocol": "TLS"}, "bus.kafka_security.protocol"),
    ],
)
def test_inconsistent_settings_are_refused_by_name(security: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as refused:
        settings(**security)
    assert SECRET not in str(refused.value)


def test_scram_options_keep_the_password_out_of_reprs(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    loaded = settings(
        protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="u",
        sasl_password=SECRET,
        ca_file=str(pki.ca),
    )
    options = kafka_options(loaded.bus)
    assert options.client()["sasl_plain_password"] == SECRET
    assert options.security["ssl_context"].check_hostname is True
    assert SECRET not in repr(options) and SECRET not in repr(loaded)
    assert options.client(client_id="x")["bootstrap_servers"] == "localhost:9092"


def test_plaintext_has_no_tls_and_no_sasl() -> None:
    options = kafka_options(settings().bus)
    assert options.security == {"security_protocol": "PLAINTEXT"}


def test_unusable_files_name_their_setting(tmp_path: Path) -> None:
    pki = make_pki(tmp_path)
    with pytest.raises(ConfigError, match="ca_file"):
        kafka_options(settings(protocol="SSL", ca_file=str(tmp_path / "missing.pem")).bus)
    wrong_password = settings(
        protocol="SSL",
        cert_file=str(pki.client_cert),
        key_file=str(pki.client_key),
        key_password="not-" + CLIENT_KEY_PASSWORD,
    )
    with pytest.raises(ConfigError, match="key_password") as refused:
        kafka_options(wrong_password.bus)
    assert CLIENT_KEY_PASSWORD not in str(refused.value)
