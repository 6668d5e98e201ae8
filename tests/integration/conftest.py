"""Fixtures of the Kafka integration tests: the listener of the session's broker a test runs
over. `kafka_listener` runs a test once over PLAINTEXT and once over SASL_SSL (SCRAM-SHA-512
with the test CA); `secured_listeners` gives the broker's secured listeners themselves."""

from __future__ import annotations

import pytest

from tests.support.kafka import KafkaBroker, KafkaEndpoint
from tests.support.kafka_secured import KafkaListener, SecuredListeners


@pytest.fixture
def secured_listeners(kafka_broker: KafkaEndpoint) -> SecuredListeners:
    if not isinstance(kafka_broker, KafkaBroker) or kafka_broker.secured is None:
        pytest.fail(
            "the secured-listener tests need the tests' own broker, which RAGSTREAM_KAFKA_"
            "BOOTSTRAP replaces: unset it to run them",
            pytrace=False,
        )
    return kafka_broker.secured


@pytest.fixture(params=["plaintext", "sasl_ssl"])
def kafka_listener(request: pytest.FixtureRequest, kafka_broker: KafkaEndpoint) -> KafkaListener:
    if request.param == "plaintext":
        return KafkaListener(kafka_broker.bootstrap)
    secured: SecuredListeners = request.getfixturevalue("secured_listeners")
    return secured.sasl_ssl()
