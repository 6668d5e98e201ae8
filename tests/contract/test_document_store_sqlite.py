"""The embedded document store against the shared DocumentStore contract."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragstream.common.models import DocState
from ragstream.common.storage.protocols import DocumentStore
from ragstream.common.storage.sqlite import Database, SqliteDocumentStore
from tests.contract.document_store_contract import WS, DocumentStoreContract, document


class TestSqliteDocumentStore(DocumentStoreContract):
    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[DocumentStore]:
        async with await Database.open(tmp_path) as db:
            yield await SqliteDocumentStore.open(db)


async def test_documents_survive_a_reopen(tmp_path: Path) -> None:
    async with await Database.open(tmp_path) as db:
        await (await SqliteDocumentStore.open(db)).put(document("d1", DocState.FAILED))
    async with await Database.open(tmp_path) as db:
        got = await (await SqliteDocumentStore.open(db)).get(WS, "d1")
    assert got is not None and got.state == DocState.FAILED
