"""The embedded mentions ledger and LLM cache against their contracts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragstream.common.storage.protocols import CacheStore, MentionStore
from ragstream.common.storage.sqlite.db import Database
from ragstream.common.storage.sqlite.mentions import SqliteCacheStore, SqliteMentionStore
from tests.contract.mention_store_contract import CacheStoreContract, MentionStoreContract


class TestSqliteMentionStore(MentionStoreContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[MentionStore]:
        async with await Database.open(tmp_path) as db:
            yield await SqliteMentionStore.open(db)


class TestSqliteCacheStore(CacheStoreContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[CacheStore]:
        async with await Database.open(tmp_path) as db:
            yield await SqliteCacheStore.open(db)
