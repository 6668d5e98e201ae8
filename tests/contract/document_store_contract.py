"""The DocumentStore contract: every backend's test class inherits this and provides `store`.

A subclass defines a `store` fixture yielding a fresh, empty store, and overrides
`refresh` if writes become readable only after one (Elasticsearch).
"""

from __future__ import annotations

import pytest

from ragstream.common.models import DocState, DocumentRecord, SearchFilter
from ragstream.common.storage.protocols import DocumentStore

WS = "ws-a"


def document(
    doc_id: str,
    state: DocState = DocState.PROCESSED,
    *,
    workspace: str = WS,
    metadata: dict[str, str] | None = None,
    timestamp: float | None = None,
    version: int = 1,
) -> DocumentRecord:
    return DocumentRecord(
        workspace=workspace,
        doc_id=doc_id,
        version=version,
        state=state,
        metadata=metadata or {},
        timestamp=timestamp,
    )


class DocumentStoreContract:
    async def refresh(self, store: DocumentStore) -> None:
        """Makes the writes so far visible to reads; nothing to do for most backends."""

    async def _put(self, store: DocumentStore, *records: DocumentRecord) -> None:
        for record in records:
            await store.put(record)
        await self.refresh(store)

    async def test_get_returns_every_field_as_written(self, store: DocumentStore) -> None:
        written = DocumentRecord(
            workspace=WS,
            doc_id="doc/1 é",
            version=7,
            state=DocState.FAILED,
            content_hash="sha256:abc",
            file_path="dir/文件.md",
            metadata={"lang": "zh", "source": "upload"},
            timestamp=1_700_000_000.25,
            error="extractor timed out",
            chunk_ids=("c3", "c1", "c2"),
            entity_count=4,
            relation_count=2,
            created_at=1_700_000_001.0,
            updated_at=1_700_000_002.0,
            processing_ms=12.5,
        )
        await self._put(store, written)
        assert await store.get(WS, "doc/1 é") == written
        assert await store.get(WS, "missing") is None

    async def test_put_replaces_the_record(self, store: DocumentStore) -> None:
        await self._put(store, document("d1", DocState.PROCESSING, version=1))
        await self._put(store, document("d1", DocState.PROCESSED, version=2))
        got = await store.get(WS, "d1")
        assert got is not None and (got.version, got.state) == (2, DocState.PROCESSED)
        assert [r.doc_id for r in await store.list(WS, None, 10)] == ["d1"]

    async def test_get_many_keeps_the_order_asked_and_skips_unknown(
        self, store: DocumentStore
    ) -> None:
        await self._put(store, *(document(f"d{i}") for i in range(4)))
        got = await store.get_many(WS, ["d3", "nope", "d0", "d2"])
        assert [r.doc_id for r in got] == ["d3", "d0", "d2"]
        assert await store.get_many(WS, []) == []

    async def test_list_pages_in_doc_id_order(self, store: DocumentStore) -> None:
        await self._put(store, *(document(f"d{i:02d}") for i in (5, 1, 9, 3, 7, 0)))
        first = await store.list(WS, None, 4)
        assert [r.doc_id for r in first] == ["d00", "d01", "d03", "d05"]
        rest = await store.list(WS, None, 4, after=first[-1].doc_id)
        assert [r.doc_id for r in rest] == ["d07", "d09"]
        assert await store.list(WS, None, 4, after="d09") == []

    async def test_list_filters_by_state(self, store: DocumentStore) -> None:
        states = [DocState.PENDING, DocState.PROCESSED, DocState.FAILED, DocState.PROCESSED]
        await self._put(store, *(document(f"d{i}", s) for i, s in enumerate(states)))
        processed = await store.list(WS, DocState.PROCESSED, 10)
        assert [r.doc_id for r in processed] == ["d1", "d3"]
        page = await store.list(WS, DocState.PROCESSED, 1, after="d1")
        assert [r.doc_id for r in page] == ["d3"]
        assert await store.list(WS, DocState.DELETED, 10) == []

    async def test_nothing_crosses_workspaces(self, store: DocumentStore) -> None:
        await self._put(store, document("d1", workspace="ws-a"), document("d1", workspace="ws-b"))
        await self._put(store, document("d1", DocState.FAILED, workspace="ws-b"))
        got = await store.get("ws-a", "d1")
        assert got is not None and got.state == DocState.PROCESSED
        assert [r.workspace for r in await store.list("ws-a", None, 10)] == ["ws-a"]
        assert await store.get("ws-c", "d1") is None
        assert await store.matching("ws-c", SearchFilter()) == set()

    async def _matching_fixture(self, store: DocumentStore) -> None:
        await self._put(
            store,
            document("a", metadata={"source": "wiki", "lang": "en"}, timestamp=100.0),
            document("b", DocState.PENDING, metadata={"source": "news"}, timestamp=200.0),
            document("c", metadata={"source": "wiki", 'k"ey': "v"}),
            document("gone", DocState.DELETED, metadata={"source": "wiki"}, timestamp=150.0),
        )

    @pytest.mark.parametrize(
        ("search_filter", "expected"),
        [
            (SearchFilter(), {"a", "b", "c"}),
            (SearchFilter(metadata={"source": "wiki"}), {"a", "c"}),
            (SearchFilter(metadata={"source": "wiki", "lang": "en"}), {"a"}),
            (SearchFilter(metadata={'k"ey': "v"}), {"c"}),
            (SearchFilter(doc_ids=frozenset({"a", "gone", "zz"})), {"a"}),
            (SearchFilter(time_from=150.0), {"b"}),
            (SearchFilter(time_to=200.0), {"a"}),
            (SearchFilter(time_from=100.0, time_to=201.0, metadata={"source": "news"}), {"b"}),
        ],
        ids=[
            "all-live",
            "metadata",
            "metadata-all-keys",
            "metadata-odd-key",
            "doc-ids",
            "time-from",
            "time-to",
            "combined",
        ],
    )
    async def test_matching_returns_live_documents_that_satisfy_the_filter(
        self, store: DocumentStore, search_filter: SearchFilter, expected: set[str]
    ) -> None:
        await self._matching_fixture(store)
        assert await store.matching(WS, search_filter) == expected
