"""A SCRAM password rotated while ragstream runs: on the broker first, then in the file that
`bus.kafka_security.sasl_password_file` names. The running indexer, the query service's
publisher (IngestService) and a bus publisher reconnect with the new password and go on,
without a restart; a wrong password in the file is an
error naming the file, logged again at every attempt, until the file is right again.

The test broker's SASL_PLAINTEXT listener expires sessions every few seconds (REAUTH_MS), so
a client still built with the old password loses its connections soon after the rotation:
these tests pass only if the clients really were rebuilt."""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from pathlib import Path

import grpc
import pytest

from ragstream.common.bus import kafka_consumer
from ragstream.common.bus.kafka import KafkaBus
from ragstream.common.bus.kafka_admin import KafkaUnavailableError
from ragstream.common.bus.kafka_security import connection_problem
from ragstream.common.bus.protocols import BusRecord, OutgoingRecord
from ragstream.common.bus.topics import Topics
from ragstream.common.config_kafka import KafkaSecurityConfig
from ragstream.v1 import ingest_pb2, ingest_pb2_grpc
from tests.support.kafka import KafkaEndpoint
from tests.support.kafka_indexer import (
    WORKSPACE,
    KafkaDeployment,
    document,
    events,
    processed,
    wait_until,
)
from tests.support.kafka_scram import set_scram_password
from tests.support.kafka_secured import REAUTH_MS, KafkaListener, SecuredListeners
from tests.support.server import RagstreamProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]
MECHANISM = "SCRAM-SHA-256"


def write_secret(path: Path, text: str) -> None:
    """Replaces the file at once, as a Secret volume swaps its files in."""
    staged = path.with_suffix(".new")
    staged.write_text(text + "\n")
    os.replace(staged, path)


class RotatingUser:
    """A SCRAM user of its own, so rotating its password disturbs no other test."""

    def __init__(self, secured: SecuredListeners, plaintext: str, tmp_path: Path) -> None:
        self.bootstrap = plaintext
        """The PLAINTEXT listener, where the test administers the users."""
        self.name = f"rot-{uuid.uuid4().hex[:10]}"
        self.file = tmp_path / "kafka-password"
        self.listener = secured.sasl_plaintext(self.name, self.file)

    def rotate_on_broker(self, password: str) -> None:
        asyncio.run(self.rotate_on_broker_async(password))

    async def rotate_on_broker_async(self, password: str) -> None:
        await set_scram_password(self.bootstrap, self.name, MECHANISM, password)
        # The broker applies the change once the metadata record reaches it.
        for _ in range(100):
            if not await connection_problem(self.with_password(password).options()):
                return
            await asyncio.sleep(0.2)
        raise TimeoutError(f"the broker does not take {self.name}'s new password")

    def with_password(self, password: str) -> KafkaListener:
        fields = self.listener.security.model_dump()
        fields.update(sasl_password_file=None, sasl_password=password)
        security = KafkaSecurityConfig.model_validate(fields)
        return KafkaListener(self.listener.bootstrap, security)


@pytest.fixture
def user(
    secured_listeners: SecuredListeners, kafka_broker: KafkaEndpoint, tmp_path: Path
) -> RotatingUser:
    user = RotatingUser(secured_listeners, kafka_broker.bootstrap, tmp_path)
    first = f"first-{uuid.uuid4().hex}"
    user.rotate_on_broker(first)
    write_secret(user.file, first)
    return user


def publish_through(server: RagstreamProcess, numbers: range) -> None:
    """PublishDocuments on the query service, which publishes with its own producer."""
    documents = [
        ingest_pb2.DocumentInput(doc_id=f"doc-{i:04d}", content=document(i).content)
        for i in numbers
    ]
    request = ingest_pb2.PublishDocumentsRequest(workspace=WORKSPACE, documents=documents)
    with grpc.insecure_channel(server.address) as channel:
        ingest_pb2_grpc.IngestServiceStub(channel).PublishDocuments(request, timeout=60)


def test_a_running_indexer_follows_a_rotated_password(user: RotatingUser, tmp_path: Path) -> None:
    first = user.file.read_text().strip()
    second = f"second-{uuid.uuid4().hex}"
    deployment = KafkaDeployment.on(user.listener, tmp_path / "data", partitions=2)
    with deployment.indexer("indexer") as indexer, deployment.server("serve") as server:
        publish_through(server, range(4))
        wait_until(lambda: processed(deployment.data_dir) == 4, 90, "the first 4 documents")
        user.rotate_on_broker(second)
        refused = asyncio.run(connection_problem(user.with_password(first).options()))
        assert "refused the SASL credentials" in refused
        time.sleep(2 * REAUTH_MS / 1000)  # the processes' sessions expire meanwhile
        write_secret(user.file, second)
        publish_through(server, range(4, 8))
        wait_until(lambda: processed(deployment.data_dir) == 8, 90, "4 more documents")

        wrong = f"wrong-{uuid.uuid4().hex}"
        before = len(indexer.log())
        write_secret(user.file, wrong)
        wait_until(lambda: refusals(indexer.log()[before:]), 60, "the refusal")
        write_secret(user.file, second)
        asyncio.run(deployment.publish(events([document(i) for i in range(8, 10)])))
        wait_until(lambda: processed(deployment.data_dir) == 10, 90, "2 more documents")
        assert not indexer.exited()
        log = indexer.log()
        served = server.log()
    assert "the producer reconnects" in served, served
    assert first not in served and second not in served
    changed = [line for line in log.splitlines() if "Kafka login changed" in line]
    assert len(changed) >= 3, log  # the document consumer and the producer, twice
    assert f"sasl_password_file ({user.file})" in refusals(log[before:])
    assert "Traceback" not in log
    for secret in (first, second, wrong):
        assert secret not in log


def refusals(log: str) -> str:
    return "\n".join(line for line in log.splitlines() if "refused the SASL credentials" in line)


async def published_then_rotated(user: RotatingUser) -> tuple[KafkaBus, str, str]:
    """A bus that published "ws/before"; then the password rotated on the broker alone,
    long enough ago that the broker has ended the producer's sessions. The bus, its
    document topic and the new password (not in the file yet)."""
    cfg = user.listener.bus(topic_prefix=f"r{uuid.uuid4().hex[:12]}", partitions=1)
    topic = Topics(cfg.topic_prefix).documents
    bus = await KafkaBus.open(cfg, 1_000_000)
    await bus.publisher.publish(topic, [OutgoingRecord("ws/before", b"1")])
    second = f"second-{uuid.uuid4().hex}"
    await user.rotate_on_broker_async(second)
    await asyncio.sleep(2 * REAUTH_MS / 1000)
    return bus, topic, second


async def test_a_running_publisher_follows_a_rotated_password(
    user: RotatingUser, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ragstream.common.bus")
    bus, topic, second = await published_then_rotated(user)
    try:
        write_secret(user.file, second)
        await bus.publisher.publish(topic, [OutgoingRecord("ws/after", b"2")])

        write_secret(user.file, "wrong")
        with pytest.raises(KafkaUnavailableError) as caught:
            async with asyncio.timeout(60):
                await bus.publisher.publish(topic, [OutgoingRecord("ws/refused", b"3")])
        assert "refused the SASL credentials" in str(caught.value)
        assert f"sasl_password_file ({user.file})" in str(caught.value)

        write_secret(user.file, second)
        await bus.publisher.publish(topic, [OutgoingRecord("ws/again", b"4")])
        consumer = bus.consumer(f"g-{uuid.uuid4().hex}", [topic])
        got: list[BusRecord] = []
        async with asyncio.timeout(30):
            while len(got) < 3:
                got += await consumer.poll(10, timeout=0.5)
    finally:
        await bus.close()
    assert [r.key for r in got] == ["ws/before", "ws/after", "ws/again"]
    assert "the producer reconnects" in caplog.text
    assert second not in caplog.text


async def test_a_publish_stuck_on_a_refused_login_moves_to_the_rotated_one(
    user: RotatingUser, caplog: pytest.LogCaptureFixture
) -> None:
    """The broker refuses the producer's login (rotated there first) while a publish is
    under way: the publish waits on that producer only until the file holds the new
    password, not for the producer's 40 s request timeout, and no other publish queues
    behind it."""
    caplog.set_level(logging.INFO, logger="ragstream.common.bus")
    bus, topic, second = await published_then_rotated(user)
    try:
        stuck = asyncio.create_task(
            bus.publisher.publish(topic, [OutgoingRecord("ws/stuck", b"2")])
        )
        await asyncio.sleep(2)
        assert not stuck.done()
        write_secret(user.file, second)
        async with asyncio.timeout(20):  # the old producer alone would hold it 40 s
            await stuck
            await bus.publisher.publish(topic, [OutgoingRecord("ws/after", b"3")])
        consumer = bus.consumer(f"g-{uuid.uuid4().hex}", [topic])
        got: list[BusRecord] = []
        async with asyncio.timeout(30):
            while {r.key for r in got} < {"ws/before", "ws/stuck", "ws/after"}:
                got += await consumer.poll(10, timeout=0.5)
    finally:
        await bus.close()
    assert "publishing again with the new one" in caplog.text


async def test_a_commit_stuck_on_a_refused_login_gives_way_to_the_poll_that_renews_it(
    user: RotatingUser, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The consumer's client, built with the old password, loses its connections after the
    rotation on the broker and retries its group coordinator for ever: its commit must give
    up, or the loop never polls again, and a poll is what rebuilds the client with the new
    password."""
    monkeypatch.setattr(kafka_consumer, "COMMIT_TIMEOUT_S", 3.0)
    caplog.set_level(logging.INFO, logger="ragstream.common.bus")
    cfg = user.listener.bus(topic_prefix=f"c{uuid.uuid4().hex[:12]}", partitions=1)
    topic = Topics(cfg.topic_prefix).documents
    bus = await KafkaBus.open(cfg, 1_000_000)
    try:
        await bus.publisher.publish(topic, [OutgoingRecord("ws/one", b"1")])
        consumer = bus.consumer(f"g-{uuid.uuid4().hex}", [topic])
        got: list[BusRecord] = []
        async with asyncio.timeout(30):
            while not got:
                got += await consumer.poll(10, timeout=0.5)
        second = f"second-{uuid.uuid4().hex}"
        await user.rotate_on_broker_async(second)
        await asyncio.sleep(2 * REAUTH_MS / 1000)  # the broker ends the client's sessions
        async with asyncio.timeout(20):
            await consumer.commit(got)
        write_secret(user.file, second)
        await bus.publisher.publish(topic, [OutgoingRecord("ws/two", b"2")])
        async with asyncio.timeout(60):
            while "ws/two" not in {r.key for r in got}:
                got += await consumer.poll(10, timeout=0.5)
    finally:
        await bus.close()
    assert "rejoins the group with it" in caplog.text
