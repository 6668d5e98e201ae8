"""The SearchStore contract: every backend's test class inherits this and provides `store`.

A subclass defines a `store` fixture yielding a fresh, empty store, and overrides
`refresh` if writes become searchable only after one (Elasticsearch). Only the Protocol
API is used here, so the suite says nothing about how a backend stores records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord, Vector
from ragstream.common.storage.protocols import SearchStore

DIM = 8
WS = "ws-a"
NO_FILTER = SearchFilter()


def unit(*components: float) -> Vector:
    """A normalized DIM-d vector from its leading components."""
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(components)] = components
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def record(
    record_id: str,
    terms: Sequence[str] = (),
    *,
    workspace: str = WS,
    vector: Vector | None = None,
    doc_ids: Sequence[str] = ("doc-1",),
    metadata: dict[str, str] | None = None,
    timestamp: float | None = None,
    text: str | None = None,
) -> SearchRecord:
    return SearchRecord(
        id=record_id,
        workspace=workspace,
        text=text if text is not None else " ".join(terms),
        terms=tuple(terms),
        vector=vector if vector is not None else unit(1.0),
        doc_ids=tuple(doc_ids),
        metadata=metadata or {},
        timestamp=timestamp,
    )


def ids(hits: Sequence[Hit]) -> list[str]:
    return [hit.record.id for hit in hits]


class SearchStoreContract:
    async def refresh(self, store: SearchStore) -> None:
        """Makes the writes so far visible to searches; nothing to do for most backends."""

    async def _upsert(
        self,
        store: SearchStore,
        records: Sequence[SearchRecord],
        collection: Collection = Collection.CHUNKS,
    ) -> None:
        await store.upsert(collection, records)
        await self.refresh(store)

    async def _search(
        self,
        store: SearchStore,
        kind: str,
        *,
        terms: Sequence[str] = ("shared",),
        vector: Vector | None = None,
        search_filter: SearchFilter = NO_FILTER,
        limit: int = 10,
        workspace: str = WS,
    ) -> list[Hit]:
        if kind == "terms":
            return await store.search_terms(
                Collection.CHUNKS, workspace, terms, search_filter, limit
            )
        query = vector if vector is not None else unit(1.0)
        return await store.search_vector(Collection.CHUNKS, workspace, query, search_filter, limit)

    # -- records --------------------------------------------------------------------------

    @pytest.mark.parametrize("collection", list(Collection))
    async def test_get_returns_every_field_as_written_hits_all_but_terms_and_vector(
        self, store: SearchStore, collection: Collection
    ) -> None:
        written = SearchRecord(
            id="rec-1",
            workspace=WS,
            text="Héllo wörld 北京大学",
            terms=("héllo", "wörld", "北京大学"),
            vector=unit(0.6, 0.8),
            doc_ids=("doc-1", "doc-2"),
            metadata={"lang": "de", "source": "wiki"},
            timestamp=1_700_000_000.5,
            attrs={"file_path": "a/b.md", "order": 3, "keywords": ["x", "y"], "weight": 0.5},
        )
        await self._upsert(store, [written], collection)
        [got] = await store.get(collection, WS, ["rec-1"])
        assert (got.id, got.workspace, got.text, got.terms) == (
            written.id,
            written.workspace,
            written.text,
            written.terms,
        )
        assert (got.doc_ids, dict(got.metadata), got.timestamp) == (
            written.doc_ids,
            written.metadata,
            written.timestamp,
        )
        assert dict(got.attrs) == dict(written.attrs)
        np.testing.assert_allclose(got.vector, written.vector, atol=1e-2)
        assert await store.count(collection, WS) == 1
        await self.refresh(store)
        for hits in (
            await store.search_terms(collection, WS, ["wörld"], NO_FILTER, 5),
            await store.search_vector(collection, WS, unit(0.6, 0.8), NO_FILTER, 5),
        ):
            # A hit's record is the stored one without its terms and vector (see models.Hit).
            [hit] = hits
            assert hit.record == replace(got, terms=(), vector=hit.record.vector)
            assert hit.record.vector.shape == (0,)
        # Read as a hit carries it: the same record without its terms and vector.
        [light] = await store.get(collection, WS, ["rec-1"], whole=False)
        assert light == replace(got, terms=(), vector=light.vector)
        assert light.vector.shape == (0,)

    async def test_get_keeps_the_order_asked_and_skips_unknown_ids(
        self, store: SearchStore
    ) -> None:
        await self._upsert(store, [record(f"r{i}", ["t"]) for i in range(4)])
        for whole in (True, False):
            got = await store.get(Collection.CHUNKS, WS, ["r3", "missing", "r0", "r2"], whole=whole)
            assert [r.id for r in got] == ["r3", "r0", "r2"]
            assert await store.get(Collection.CHUNKS, WS, [], whole=whole) == []
            assert await store.get(Collection.CHUNKS, "another", ["r0"], whole=whole) == []

    async def test_existing_names_the_stored_ids_of_the_workspace(self, store: SearchStore) -> None:
        await self._upsert(store, [record(f"r{i}", ["t"]) for i in range(3)])
        asked = ["r2", "missing", "r0", "r2"]
        assert await store.existing(Collection.CHUNKS, WS, asked) == {"r0", "r2"}
        assert await store.existing(Collection.CHUNKS, "another", asked) == set()
        assert await store.existing(Collection.ENTITIES, WS, asked) == set()
        assert await store.existing(Collection.CHUNKS, WS, []) == set()

    async def test_upsert_replaces_a_record_everywhere(self, store: SearchStore) -> None:
        await self._upsert(store, [record("r1", ["old"], vector=unit(1.0), metadata={"v": "1"})])
        await self._upsert(
            store, [record("r1", ["new"], vector=unit(0.0, 1.0), metadata={"v": "2"})]
        )
        assert await store.count(Collection.CHUNKS, WS) == 1
        [got] = await store.get(Collection.CHUNKS, WS, ["r1"])
        assert got.terms == ("new",) and dict(got.metadata) == {"v": "2"}
        assert await self._search(store, "terms", terms=["old"]) == []
        assert ids(await self._search(store, "terms", terms=["new"])) == ["r1"]
        [hit] = await self._search(store, "vector", vector=unit(0.0, 1.0), limit=1)
        assert hit.record.id == "r1" and hit.score == pytest.approx(1.0, abs=1e-2)
        only_new = SearchFilter(metadata={"v": "1"})
        assert await self._search(store, "vector", search_filter=only_new) == []

    async def test_delete_removes_records_and_ignores_unknown_ids(self, store: SearchStore) -> None:
        await self._upsert(store, [record("r1", ["shared"]), record("r2", ["shared"])])
        await store.delete(Collection.CHUNKS, WS, ["r1", "never-existed"])
        await self.refresh(store)
        assert [r.id for r in await store.get(Collection.CHUNKS, WS, ["r1", "r2"])] == ["r2"]
        assert await store.count(Collection.CHUNKS, WS) == 1
        assert ids(await self._search(store, "terms")) == ["r2"]
        assert ids(await self._search(store, "vector")) == ["r2"]
        await store.delete(Collection.CHUNKS, WS, [])

    async def test_collections_are_separate(self, store: SearchStore) -> None:
        await self._upsert(store, [record("same-id", ["chunk"])], Collection.CHUNKS)
        await self._upsert(store, [record("same-id", ["entity"])], Collection.ENTITIES)
        [entity] = await store.get(Collection.ENTITIES, WS, ["same-id"])
        assert entity.terms == ("entity",)
        assert await store.count(Collection.RELATIONS, WS) == 0
        found = await store.search_terms(Collection.ENTITIES, WS, ["chunk"], NO_FILTER, 10)
        assert found == []

    @pytest.mark.parametrize("kind", ["terms", "vector"])
    async def test_nothing_crosses_workspaces(self, store: SearchStore, kind: str) -> None:
        twins = [
            record("r1", ["shared"], workspace=ws, metadata={"k": "v"}) for ws in ("ws-a", "ws-b")
        ]
        await self._upsert(store, twins)
        await store.delete(Collection.CHUNKS, "ws-b", ["r1"])
        await self.refresh(store)
        assert await store.count(Collection.CHUNKS, "ws-b") == 0
        assert await store.get(Collection.CHUNKS, "ws-b", ["r1"]) == []
        assert await self._search(store, kind, workspace="ws-b") == []
        [hit] = await self._search(store, kind, workspace="ws-a")
        assert hit.record.workspace == "ws-a"
        assert await self._search(store, kind, workspace="ws-c") == []

    # -- BM25 -----------------------------------------------------------------------------

    async def test_bm25_ranks_frequent_terms_in_short_records_first(
        self, store: SearchStore
    ) -> None:
        filler = [f"filler{i}" for i in range(30)]
        await self._upsert(
            store,
            [
                record("long-once", ["solar", *filler]),
                record("short-twice", ["solar", "panel", "solar"]),
                record("short-once", ["solar", "wind", "hydro"]),
                record("unrelated", ["wind", "hydro"]),
            ],
        )
        hits = await self._search(store, "terms", terms=["solar"])
        assert ids(hits) == ["short-twice", "short-once", "long-once"]
        assert hits[0].score > hits[1].score > hits[2].score > 0

    async def test_bm25_matches_any_term_and_ranks_more_matches_first(
        self, store: SearchStore
    ) -> None:
        await self._upsert(
            store,
            [
                record("both", ["alpha", "beta", "x"]),
                record("one", ["alpha", "y", "z"]),
                record("none", ["q"]),
            ],
        )
        hits = await self._search(store, "terms", terms=["alpha", "beta", "absent"])
        assert ids(hits) == ["both", "one"]

    async def test_bm25_without_usable_terms_finds_nothing(self, store: SearchStore) -> None:
        await self._upsert(store, [record("r1", ["alpha"])])
        assert await self._search(store, "terms", terms=[]) == []
        assert await self._search(store, "terms", terms=["", " "]) == []
        assert await self._search(store, "terms", terms=["alpha"], limit=0) == []

    async def test_bm25_terms_are_never_query_syntax(self, store: SearchStore) -> None:
        odd = ['say"hi', "OR", "NOT", "AND", "(x", "*", "near:", "a^b", "-", "{c}"]
        await self._upsert(store, [record(f"r{i}", [term, "pad"]) for i, term in enumerate(odd)])
        for i, term in enumerate(odd):
            assert ids(await self._search(store, "terms", terms=[term])) == [f"r{i}"], term

    async def test_bm25_treats_each_term_as_one_token(self, store: SearchStore) -> None:
        await self._upsert(
            store,
            [
                record("cjk", ["北京大学", "位于", "北京"]),
                record("cjk-long", ["清华大学"]),
                record("joined", ["state-of-the-art", "gpt_4", "2024", "café", "c++"]),
            ],
        )
        assert ids(await self._search(store, "terms", terms=["北京大学"])) == ["cjk"]
        assert await self._search(store, "terms", terms=["大学"]) == []
        assert await self._search(store, "terms", terms=["北"]) == []
        for term in ["state-of-the-art", "gpt_4", "2024", "café", "c++"]:
            assert ids(await self._search(store, "terms", terms=[term])) == ["joined"], term
        for part in ["state", "art", "gpt", "4", "cafe", "c"]:
            assert await self._search(store, "terms", terms=[part]) == [], part

    async def test_searches_respect_the_limit(self, store: SearchStore) -> None:
        await self._upsert(store, [record(f"r{i}", ["shared"]) for i in range(12)])
        for kind in ("terms", "vector"):
            assert len(await self._search(store, kind, limit=5)) == 5
            assert len(await self._search(store, kind, limit=50)) == 12

    # -- dense ----------------------------------------------------------------------------

    async def test_vector_search_ranks_by_cosine(self, store: SearchStore) -> None:
        await self._upsert(
            store,
            [
                record("far", vector=unit(0.0, 1.0)),
                record("near", vector=unit(0.9, 0.1)),
                record("exact", vector=unit(1.0)),
                record("opposite", vector=unit(-1.0)),
            ],
        )
        hits = await self._search(store, "vector", vector=unit(1.0))
        assert ids(hits) == ["exact", "near", "far", "opposite"]
        expected = [1.0, 0.9 / math.hypot(0.9, 0.1), 0.0, -1.0]
        assert [h.score for h in hits] == pytest.approx(expected, abs=1e-2)
        kept = await store.search_vector(
            Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 10, min_score=0.5
        )
        assert ids(kept) == ["exact", "near"]

    async def test_vector_searches_asked_together_answer_as_one_by_one(
        self, store: SearchStore
    ) -> None:
        await self._upsert(
            store,
            [
                record("x", vector=unit(1.0), metadata={"lang": "en"}),
                record("xy", vector=unit(0.8, 0.6), metadata={"lang": "de"}),
                record("y", vector=unit(0.0, 1.0), metadata={"lang": "en"}),
                record("z", vector=unit(0.0, 0.0, 1.0), metadata={"lang": "en"}),
                record("x-elsewhere", vector=unit(1.0), workspace="ws-b"),
            ],
        )
        queries = [unit(1.0), np.zeros(DIM, dtype=np.float32), unit(0.0, 1.0), unit(0.6, 0.8)]
        for search_filter in (NO_FILTER, SearchFilter(metadata={"lang": "en"})):
            for limit, min_score in ((10, -1.0), (2, -1.0), (10, 0.5)):
                together = await store.search_vectors(
                    Collection.CHUNKS, WS, queries, search_filter, limit, min_score
                )
                one_by_one = [
                    await store.search_vector(
                        Collection.CHUNKS, WS, query, search_filter, limit, min_score
                    )
                    for query in queries
                ]
                assert [ids(hits) for hits in together] == [ids(h) for h in one_by_one]
                for hits, alone in zip(together, one_by_one, strict=True):
                    assert [h.score for h in hits] == pytest.approx([h.score for h in alone])
        [exact, zero, near_y, _] = await store.search_vectors(
            Collection.CHUNKS, WS, queries, NO_FILTER, 10, 0.5
        )
        assert (ids(exact), zero, ids(near_y)) == (["x", "xy"], [], ["y", "xy"])
        assert await store.search_vectors(Collection.CHUNKS, WS, [], NO_FILTER, 5) == []
        assert await store.search_vectors(Collection.CHUNKS, WS, queries[:2], NO_FILTER, 0) == [
            [],
            [],
        ]

    async def test_a_zero_vector_is_found_by_bm25_only(self, store: SearchStore) -> None:
        # A text the embedder does not serve is written with a zero vector (providers/gate.py).
        zero = np.zeros(DIM, dtype=np.float32)
        await self._upsert(
            store,
            [
                record("unserved", ["鹦鹉"], vector=zero),
                record("far", ["fish"], vector=unit(0.0, 1.0)),
            ],
        )
        hits = await store.search_vector(Collection.CHUNKS, WS, unit(1.0), NO_FILTER, 10, -1.0)
        assert ids(hits) == ["far"]
        assert ids(await self._search(store, "terms", terms=["鹦鹉"])) == ["unserved"]

    async def test_vector_search_normalizes_what_it_is_given(self, store: SearchStore) -> None:
        await self._upsert(store, [record("r1", vector=(3.0 * unit(1.0, 1.0)).astype(np.float32))])
        query = (5.0 * unit(1.0, 1.0)).astype(np.float32)
        [hit] = await self._search(store, "vector", vector=query)
        assert hit.score == pytest.approx(1.0, abs=1e-2)

    async def test_similarities_score_the_ids_asked_that_exist(self, store: SearchStore) -> None:
        await self._upsert(
            store,
            [
                record("exact", vector=unit(1.0)),
                record("near", vector=unit(0.9, 0.1)),
                record("far", vector=unit(0.0, 1.0)),
                record("elsewhere", vector=unit(1.0), workspace="ws-b"),
            ],
        )
        asked = ["far", "missing", "exact", "near", "exact", "elsewhere"]
        scores = await store.similarities(
            Collection.CHUNKS, WS, asked, (3.0 * unit(1.0)).astype(np.float32), NO_FILTER
        )
        assert scores.keys() == {"exact", "near", "far"}
        expected = {"exact": 1.0, "near": 0.9 / math.hypot(0.9, 0.1), "far": 0.0}
        assert scores == pytest.approx(expected, abs=1e-2)
        assert await store.similarities(Collection.CHUNKS, WS, [], unit(1.0), NO_FILTER) == {}
        other = await store.similarities(Collection.ENTITIES, WS, asked, unit(1.0), NO_FILTER)
        assert other == {}
        await self._upsert(store, [record("far", vector=unit(1.0))])
        rewritten = await store.similarities(Collection.CHUNKS, WS, ["far"], unit(1.0), NO_FILTER)
        assert rewritten == pytest.approx({"far": 1.0}, abs=1e-2)

    # -- filters --------------------------------------------------------------------------

    async def _filter_fixture(self, store: SearchStore) -> None:
        odd_key = 'odd "key".$[0] 键'
        await self._upsert(
            store,
            [
                record(
                    "a",
                    ["shared"],
                    vector=unit(1.0, 0.1),
                    doc_ids=["d1"],
                    metadata={"source": "wiki", "lang": "en"},
                    timestamp=100.0,
                ),
                record(
                    "b",
                    ["shared"],
                    vector=unit(1.0, 0.2),
                    doc_ids=["d2"],
                    metadata={"source": "news", "lang": "en"},
                    timestamp=200.0,
                ),
                record(
                    "c",
                    ["shared"],
                    vector=unit(1.0, 0.3),
                    doc_ids=["d3"],
                    metadata={"source": "wiki", "lang": "de"},
                ),
                record(
                    "d", ["shared"], vector=unit(1.0, 0.4), doc_ids=["d1", "d4"], timestamp=300.0
                ),
                record(
                    "e",
                    ["shared"],
                    vector=unit(1.0, 0.5),
                    doc_ids=["d5"],
                    metadata={odd_key: "v 1", "source": "wiki.en"},
                    timestamp=50.0,
                ),
            ],
        )

    FILTER_CASES = (
        pytest.param(SearchFilter(metadata={"source": "wiki"}), {"a", "c"}, id="metadata"),
        pytest.param(
            SearchFilter(metadata={"source": "wiki", "lang": "en"}), {"a"}, id="metadata-all-keys"
        ),
        pytest.param(
            SearchFilter(metadata={'odd "key".$[0] 键': "v 1"}), {"e"}, id="metadata-odd-key"
        ),
        pytest.param(SearchFilter(metadata={"source": "absent"}), set(), id="metadata-no-match"),
        pytest.param(SearchFilter(metadata={"missing": "wiki"}), set(), id="metadata-missing-key"),
        pytest.param(SearchFilter(doc_ids=frozenset({"d1"})), {"a", "d"}, id="doc-ids"),
        pytest.param(
            SearchFilter(doc_ids=frozenset({"d3", "d4", "zz"})), {"c", "d"}, id="doc-ids-any"
        ),
        pytest.param(SearchFilter(doc_ids=frozenset({"zz"})), set(), id="doc-ids-no-match"),
        pytest.param(SearchFilter(time_from=200.0), {"b", "d"}, id="time-from-inclusive"),
        pytest.param(SearchFilter(time_to=200.0), {"a", "e"}, id="time-to-exclusive"),
        pytest.param(SearchFilter(time_from=100.0, time_to=300.0), {"a", "b"}, id="time-range"),
        pytest.param(
            SearchFilter(doc_ids=frozenset({"d1", "d2"}), metadata={"lang": "en"}, time_from=150.0),
            {"b"},
            id="combined",
        ),
    )

    @pytest.mark.parametrize("kind", ["terms", "vector"])
    @pytest.mark.parametrize(("search_filter", "expected"), FILTER_CASES)
    async def test_filters_select_exactly_the_matching_records(
        self, store: SearchStore, kind: str, search_filter: SearchFilter, expected: set[str]
    ) -> None:
        await self._filter_fixture(store)
        assert len(await self._search(store, kind)) == 5
        hits = await self._search(store, kind, search_filter=search_filter)
        assert set(ids(hits)) == expected
        assert len(hits) == len(expected)

    @pytest.mark.parametrize(("search_filter", "expected"), FILTER_CASES)
    async def test_similarities_keep_only_what_the_filter_allows(
        self, store: SearchStore, search_filter: SearchFilter, expected: set[str]
    ) -> None:
        await self._filter_fixture(store)
        everything = ["a", "b", "c", "d", "e"]
        scores = await store.similarities(
            Collection.CHUNKS, WS, everything, unit(1.0), search_filter
        )
        assert scores.keys() == expected

    @pytest.mark.parametrize("kind", ["terms", "vector"])
    @pytest.mark.parametrize(
        "search_filter",
        [
            SearchFilter(doc_ids=frozenset({"allowed-doc"})),
            SearchFilter(metadata={"tier": "ok"}),
            SearchFilter(time_from=500.0),
        ],
        ids=["doc-ids", "metadata", "time"],
    )
    async def test_filters_apply_before_the_top_k(
        self, store: SearchStore, kind: str, search_filter: SearchFilter
    ) -> None:
        blocked = [
            record(
                f"blocked-{i:02d}",
                ["target", "target"],
                vector=unit(1.0),
                doc_ids=["blocked-doc"],
                metadata={"tier": "blocked"},
                timestamp=10.0,
            )
            for i in range(50)
        ]
        allowed = record(
            "allowed",
            ["target", *[f"pad{i}" for i in range(20)]],
            vector=unit(0.2, 1.0),
            doc_ids=["allowed-doc"],
            metadata={"tier": "ok"},
            timestamp=1000.0,
        )
        await self._upsert(store, [*blocked, allowed])
        unfiltered = await self._search(store, kind, terms=["target"], vector=unit(1.0), limit=5)
        assert "allowed" not in ids(unfiltered)
        hits = await self._search(
            store, kind, terms=["target"], vector=unit(1.0), limit=5, search_filter=search_filter
        )
        assert ids(hits) == ["allowed"]
