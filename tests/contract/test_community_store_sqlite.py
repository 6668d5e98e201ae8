"""The embedded community store against its contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragstream.common.storage.protocols import CommunityStore
from ragstream.common.storage.sqlite.communities import SqliteCommunityStore
from ragstream.common.storage.sqlite.db import Database
from tests.contract.community_store_contract import CommunityStoreContract


class TestSqliteCommunityStore(CommunityStoreContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[CommunityStore]:
        async with await Database.open(tmp_path) as db:
            yield await SqliteCommunityStore.open(db)
