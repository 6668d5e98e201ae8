"""The embedded event log passes the event-bus contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragstream.common.bus.protocols import Bus
from ragstream.common.bus.sqlite_log import open_sqlite_bus
from ragstream.common.bus.topics import Topics
from ragstream.common.storage.sqlite import Database
from tests.contract.bus_contract import BusContract


class TestSqliteBus(BusContract):
    @pytest.fixture
    async def bus(self, tmp_path: Path) -> AsyncIterator[Bus]:
        async with await Database.open(tmp_path) as db:
            bus = await open_sqlite_bus(db)
            yield bus
            await bus.close()

    @pytest.fixture
    def topics(self) -> Topics:
        return Topics("contract")
