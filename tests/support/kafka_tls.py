"""A throwaway PKI for the test broker's secured listeners, made fresh for each broker.

A CA, the broker's certificate (for 127.0.0.1 and localhost) and a client certificate whose
key is encrypted with a password, all as PEM files: Kafka reads PEM key stores and trust
stores directly (ssl.keystore.type=PEM: the key in PKCS#8 followed by its chain), and the
clients read them through Python's ssl module. Keys are P-256: generated in milliseconds.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CLIENT_KEY_PASSWORD = "client-key-secret"
VALID_FOR = datetime.timedelta(days=2)


@dataclass(frozen=True, slots=True)
class TestPki:
    ca: Path
    """The CA certificate: the trust store of the broker (client certificates) and clients."""
    broker: Path
    """The broker's key and certificate chain, one PEM file (Kafka's PEM key store)."""
    server_cert: Path
    """The same certificate (127.0.0.1, localhost) on its own, with server_key: for any
    other test server (e.g. gRPC under TLS)."""
    server_key: Path
    client_cert: Path
    client_key: Path
    """Encrypted with CLIENT_KEY_PASSWORD."""
    other_ca: Path
    """A CA that signed nothing here: trusting it alone must fail verification."""


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[str, ec.EllipticCurvePrivateKey] | None,
    extensions: list[tuple[x509.ExtensionType, bool]],
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, signing_key = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALID_FOR)
    )
    for extension, critical in extensions:
        builder = builder.add_extension(extension, critical=critical)
    return builder.sign(signing_key, hashes.SHA256())


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: ec.EllipticCurvePrivateKey, password: str | None = None) -> bytes:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode())
        if password
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )


def _ca(name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    constraints = x509.BasicConstraints(ca=True, path_length=0)
    return _certificate(name, key, None, [(constraints, True)]), key


def _leaf(
    name: str, ca: tuple[x509.Certificate, ec.EllipticCurvePrivateKey], server: bool
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    usage = ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH
    extensions: list[tuple[x509.ExtensionType, bool]] = [
        (x509.BasicConstraints(ca=False, path_length=None), True),
        (x509.ExtendedKeyUsage([usage]), False),
    ]
    if server:
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        extensions.append((x509.SubjectAlternativeName(names), False))
    ca_name = ca[0].subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    return _certificate(name, key, (str(ca_name), ca[1]), extensions), key


def make_pki(directory: Path) -> TestPki:
    """Writes the PKI's files into `directory` (created if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    ca = _ca("ragstream test CA")
    broker_cert, broker_key = _leaf("kafka broker", ca, server=True)
    client_cert, client_key = _leaf("ragstream client", ca, server=False)
    pki = TestPki(
        ca=directory / "ca.pem",
        broker=directory / "broker.pem",
        server_cert=directory / "server.crt",
        server_key=directory / "server.key",
        client_cert=directory / "client.crt",
        client_key=directory / "client.key",
        other_ca=directory / "other-ca.pem",
    )
    pki.ca.write_bytes(_pem(ca[0]))
    pki.broker.write_bytes(_key_pem(broker_key) + _pem(broker_cert) + _pem(ca[0]))
    pki.server_cert.write_bytes(_pem(broker_cert))
    pki.server_key.write_bytes(_key_pem(broker_key))
    pki.client_cert.write_bytes(_pem(client_cert))
    pki.client_key.write_bytes(_key_pem(client_key, CLIENT_KEY_PASSWORD))
    pki.other_ca.write_bytes(_pem(_ca("unrelated CA")[0]))
    return pki
