"""Kafka passes the event-bus contract, on the real broker the test tooling starts."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from ragstream.common.bus.kafka import open_kafka_bus
from ragstream.common.bus.protocols import Bus
from ragstream.common.bus.topics import Topics
from ragstream.common.config import Settings
from tests.contract.bus_contract import BusContract

if TYPE_CHECKING:  # the fixture module is loaded by tests/conftest.py as a plugin
    from tests.support.kafka import KafkaEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


class TestKafkaBus(BusContract):
    @pytest.fixture
    def topics(self) -> Topics:
        return Topics(f"contract{uuid.uuid4().hex[:12]}")

    @pytest.fixture
    async def bus(self, kafka_broker: KafkaEndpoint, topics: Topics) -> AsyncIterator[Bus]:
        settings = Settings(
            bus={
                "backend": "kafka",
                "kafka_bootstrap": kafka_broker.bootstrap,
                "topic_prefix": topics.prefix,
                "partitions": 3,
            }
        )
        bus = await open_kafka_bus(settings)
        yield bus
        await bus.close()
