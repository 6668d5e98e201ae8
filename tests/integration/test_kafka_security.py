"""The bus on the test broker's secured listeners: SCRAM-SHA-512 and OAUTHBEARER over TLS,
TLS with a client certificate (its key encrypted), and each refusal named by its setting:
a wrong password, a missing client certificate, an untrusted CA. A `ragstream indexer` with
a wrong password retries with backoff, then exits with one line, no traceback."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from ragstream.common.bus.kafka import KafkaBus
from ragstream.common.bus.kafka_admin import KafkaUnavailableError
from ragstream.common.bus.protocols import BusRecord, OutgoingRecord
from ragstream.common.bus.topics import Topics
from tests.support.kafka_indexer import KafkaDeployment
from tests.support.kafka_secured import (
    SCRAM_PASSWORD,
    KafkaListener,
    SecuredListeners,
    unsecured_jwt,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
WRONG_PASSWORD = "not-the-password-31f0"


async def round_trip(listener: KafkaListener) -> list[BusRecord]:
    """Opens the bus on the listener, publishes three records and consumes them."""
    cfg = listener.bus(topic_prefix=f"s{uuid.uuid4().hex[:12]}", partitions=1, connect_retry_s=0)
    bus = await KafkaBus.open(cfg, 1_000_000)
    topic = Topics(cfg.topic_prefix).documents
    try:
        await bus.publisher.publish(topic, [OutgoingRecord(f"ws/d{n}", b"v") for n in range(3)])
        consumer = bus.consumer(f"g-{uuid.uuid4().hex}", [topic])
        got: list[BusRecord] = []
        async with asyncio.timeout(30):
            while len(got) < 3:
                got += await consumer.poll(10, timeout=0.5)
        await consumer.commit(got)
    finally:
        await bus.close()
    return got


async def refusal(listener: KafkaListener) -> str:
    cfg = listener.bus(topic_prefix=f"s{uuid.uuid4().hex[:12]}", connect_retry_s=0)
    with pytest.raises(KafkaUnavailableError) as caught:
        await KafkaBus.open(cfg, 1_000_000)
    return str(caught.value)


async def test_scram_sha_512_over_tls(secured_listeners: SecuredListeners) -> None:
    got = await round_trip(secured_listeners.sasl_ssl())
    assert sorted(r.key for r in got) == ["ws/d0", "ws/d1", "ws/d2"]


async def test_oauthbearer_token_from_a_file(
    secured_listeners: SecuredListeners, tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text(unsecured_jwt("ragstream-indexer") + "\n")
    oauth = secured_listeners.sasl_ssl(
        sasl_mechanism="OAUTHBEARER", sasl_username="", sasl_password="", oauth_token_file=token
    )
    assert len(await round_trip(oauth)) == 3


async def test_client_certificate_with_an_encrypted_key(
    secured_listeners: SecuredListeners,
) -> None:
    assert len(await round_trip(secured_listeners.mutual_tls())) == 3


async def test_each_refusal_names_its_setting(secured_listeners: SecuredListeners) -> None:
    wrong = await refusal(secured_listeners.sasl_ssl(sasl_password=WRONG_PASSWORD))
    assert "refused the SASL credentials" in wrong
    assert "bus.kafka_security.sasl_password" in wrong
    assert WRONG_PASSWORD not in wrong and SCRAM_PASSWORD not in wrong
    no_cert = secured_listeners.mutual_tls(cert_file=None, key_file=None, key_password="")
    assert "bus.kafka_security.cert_file" in await refusal(no_cert)
    untrusted = secured_listeners.sasl_ssl(ca_file=secured_listeners.pki.other_ca)
    message = await refusal(untrusted)
    assert "not trusted" in message and "bus.kafka_security.ca_file" in message
    plaintext_client = KafkaListener(secured_listeners.sasl_ssl().bootstrap)
    assert "bus.kafka_security.protocol" in await refusal(plaintext_client)


def test_a_wrong_password_backs_off_then_exits_with_one_line(
    secured_listeners: SecuredListeners, tmp_path: Path
) -> None:
    listener = secured_listeners.sasl_ssl(sasl_password=WRONG_PASSWORD)
    deployment = KafkaDeployment.on(
        listener, tmp_path / "data", extra_env={"RAGSTREAM_BUS__CONNECT_RETRY_S": "6"}
    )
    command = [sys.executable, "-m", "ragstream.cli.main", "indexer", "--health-listen"]
    began = time.monotonic()
    done = subprocess.run(
        [*command, "127.0.0.1:0"],
        env=deployment.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    seconds = time.monotonic() - began
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    last = done.stderr.strip().splitlines()[-1]
    assert "refused the SASL credentials" in last and "bus.kafka_security.sasl_password" in last
    assert "Traceback" not in output
    assert WRONG_PASSWORD not in output and SCRAM_PASSWORD not in output
    waits = [float(w) for w in re.findall(r"retrying in ([\d.]+) s", output)]
    # Backoff, not a busy loop: 0.5, 1, 2 s, ... until the 6 s are used up.
    assert waits[:3] == [0.5, 1.0, 2.0], output
    assert len(waits) <= 5, output
    assert 6 <= seconds < 30
    # One aiokafka line and one of ours per attempt, the final error, a little start-up.
    assert len(output.strip().splitlines()) <= 3 * (len(waits) + 1) + 5, output
