"""The Elasticsearch SearchStore: BM25 over our analyzer's terms, int8-HNSW kNN.

The store works on the indices of its embedding model, found through the aliases when it
opens and again every few seconds (follow.py): after `ragstream reindex` a running process
moves to the rebuilt indices when they hold its model, and never reads another model's.

BM25 and kNN run as two searches; the query stage fuses them by RRF (as for the embedded
store), so both backends rank identically given the same hit lists. kNN scores are recomputed
from the float32 vectors the hits carry, so a hit's score is its exact cosine on any backend
(Elasticsearch's own score is (1 + dot) / 2 from the rescored float vectors: the same order).

Writes are visible to `get` (a realtime GET) at once, to searches and `count` after the next
refresh (1 s, or at once with refresh policy "wait_for"/"true", or `refresh()`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from elasticsearch import ApiError, AsyncElasticsearch

from ragstream.common.models import Collection, Hit, SearchFilter, SearchRecord, Vector
from ragstream.common.storage.elastic import codec, queries
from ragstream.common.storage.elastic.bulk import RefreshPolicy, bulk_write
from ragstream.common.storage.elastic.follow import CHECK_S, AliasFollower
from ragstream.common.storage.elastic.layout import (
    IndexLayout,
    ensure_templates,
    ensure_vector_indices,
)
from ragstream.common.storage.elastic.model import ModelFingerprint
from ragstream.common.vectors import unit_vector

SIMILARITY_PAGE = 1000
"""Ids per search of `similarities` (well within Elasticsearch's result window)."""
MSEARCH_PAGE = 64
"""Searches per request of `search_vectors`."""


class VectorSizeError(ValueError):
    """A vector's length differs from the embedding model's."""


class ElasticSearchStore:
    """SearchStore over one index per collection; create with `await ...open(...)`."""

    def __init__(
        self,
        client: AsyncElasticsearch,
        indices: Mapping[Collection, str],
        model: ModelFingerprint,
        *,
        refresh: RefreshPolicy = "false",
        follower: AliasFollower | None = None,
    ) -> None:
        self._client = client
        self._indices = dict(indices)
        self.model = model
        self._refresh: RefreshPolicy = refresh
        self._follower = follower
        """Moves the store to the indices its aliases point to (None: fixed indices)."""

    @classmethod
    async def open(
        cls,
        client: AsyncElasticsearch,
        layout: IndexLayout,
        model: ModelFingerprint,
        *,
        refresh: RefreshPolicy = "false",
        follow_s: float = CHECK_S,
    ) -> ElasticSearchStore:
        """Creates the templates and indices if missing; raises ModelMismatchError when the
        indices hold another embedding model."""
        await ensure_templates(client, layout)
        indices = await ensure_vector_indices(client, layout, model)
        follower = AliasFollower(client, layout, model, indices, check_s=follow_s)
        return cls(client, indices, model, refresh=refresh, follower=follower)

    async def close(self) -> None:
        """Nothing to release: the client is shared and closed by whoever opened it."""

    async def refresh(self) -> None:
        """Makes every write so far visible to searches and counts."""
        await self._follow()
        await self._client.indices.refresh(index=",".join(self._indices.values()))

    def index(self, collection: Collection) -> str:
        return self._indices[Collection(collection)]

    async def _follow(self) -> None:
        if self._follower is not None:
            self._indices = await self._follower.current()

    # -- writes ---------------------------------------------------------------------------

    async def upsert(self, collection: Collection, records: Sequence[SearchRecord]) -> None:
        if not records:
            return
        await self._follow()
        # Every record is checked before anything is sent: a bad one fails the whole call.
        vectors = [self._checked(unit_vector(r.vector, r.id), r.id) for r in records]
        index = self.index(collection)
        actions = [
            {
                "_op_type": "index",
                "_index": index,
                "_id": codec.doc_id(record.workspace, record.id),
                "_source": codec.to_source(record, vector),
            }
            for record, vector in zip(records, vectors, strict=True)
        ]
        await bulk_write(self._client, actions, refresh=self._refresh)

    async def delete(self, collection: Collection, workspace: str, ids: Sequence[str]) -> None:
        await self._follow()
        if not ids:
            return
        index = self.index(collection)
        actions = [
            {"_op_type": "delete", "_index": index, "_id": codec.doc_id(workspace, record_id)}
            for record_id in dict.fromkeys(ids)
        ]
        await bulk_write(self._client, actions, refresh=self._refresh)

    def _checked(self, vector: Vector, record_id: str) -> Vector:
        if vector.shape[0] != self.model.dimensions:
            raise VectorSizeError(
                f"record {record_id!r} has a {vector.shape[0]}-d vector, but the indices hold "
                f"{self.model}: the embedding model changed without `ragstream reindex`"
            )
        return vector

    # -- reads ----------------------------------------------------------------------------

    async def get(
        self, collection: Collection, workspace: str, ids: Sequence[str], *, whole: bool = True
    ) -> list[SearchRecord]:
        await self._follow()
        unique = list(dict.fromkeys(ids))
        if not unique:
            return []
        response = await self._client.mget(
            index=self.index(collection),
            ids=[codec.doc_id(workspace, i) for i in unique],
            source_excludes=None if whole else codec.HIT_EXCLUDES,
        )
        decode = codec.from_source if whole else codec.hit_record
        found = [decode(doc["_source"]) for doc in response["docs"] if doc.get("found")]
        by_id = {record.id: record for record in found if record.workspace == workspace}
        return [by_id[i] for i in unique if i in by_id]

    async def existing(
        self, collection: Collection, workspace: str, ids: Sequence[str]
    ) -> set[str]:
        await self._follow()
        unique = list(dict.fromkeys(ids))
        if not unique:
            return set()
        response = await self._client.mget(
            index=self.index(collection),
            ids=[codec.doc_id(workspace, i) for i in unique],
            source=False,
        )
        # mget answers in the order asked; a document id names its workspace.
        return {i for i, doc in zip(unique, response["docs"], strict=True) if doc.get("found")}

    async def similarities(
        self,
        collection: Collection,
        workspace: str,
        ids: Sequence[str],
        vector: Vector,
        search_filter: SearchFilter,
    ) -> dict[str, float]:
        unique = list(dict.fromkeys(ids))
        if not unique:
            return {}
        query = self._checked(unit_vector(vector, "<query>"), "<query>")
        await self._follow()
        scores: dict[str, float] = {}
        for start in range(0, len(unique), SIMILARITY_PAGE):
            batch = unique[start : start + SIMILARITY_PAGE]
            response = await self._client.search(
                index=self.index(collection),
                query=queries.ids_query(workspace, batch, search_filter),
                size=len(batch),
                source_includes=["id", "vector_b64"],
                track_total_hits=False,
            )
            for hit in response["hits"]["hits"]:
                found = hit["_source"]
                scores[found["id"]] = float(np.dot(codec.decode_vector(found["vector_b64"]), query))
        return scores

    async def count(self, collection: Collection, workspace: str) -> int:
        await self._follow()
        response = await self._client.count(
            index=self.index(collection), query={"term": {"workspace": workspace}}
        )
        return int(response["count"])

    async def search_terms(
        self,
        collection: Collection,
        workspace: str,
        terms: Sequence[str],
        search_filter: SearchFilter,
        limit: int,
    ) -> list[Hit]:
        await self._follow()
        unique = codec.unique_terms(terms)
        if not unique or limit <= 0:
            return []
        response = await self._client.search(
            index=self.index(collection),
            query=queries.bm25_query(workspace, unique, search_filter),
            size=limit,
            sort=[{"_score": "desc"}, {"id": "asc"}],
            source_excludes=codec.HIT_EXCLUDES,
            track_total_hits=False,
        )
        return [
            Hit(codec.hit_record(hit["_source"]), float(hit["_score"]))
            for hit in response["hits"]["hits"]
        ]

    async def search_vector(
        self,
        collection: Collection,
        workspace: str,
        vector: Vector,
        search_filter: SearchFilter,
        limit: int,
        min_score: float = -1.0,
    ) -> list[Hit]:
        query = self._checked(unit_vector(vector, "<query>"), "<query>")
        if limit <= 0 or not np.any(query):
            return []  # a zero vector has no direction: nothing is similar to it
        await self._follow()
        knn = queries.knn_clause(workspace, query, search_filter, limit)
        response = await self._client.search(
            index=self.index(collection),
            knn=knn,
            size=knn["k"],
            source_excludes=codec.HIT_EXCLUDES[:2],
            track_total_hits=False,
        )
        return exact_hits(response["hits"]["hits"], query, min_score)

    async def search_vectors(
        self,
        collection: Collection,
        workspace: str,
        vectors: Sequence[Vector],
        search_filter: SearchFilter,
        limit: int,
        min_score: float = -1.0,
    ) -> list[list[Hit]]:
        found: list[list[Hit]] = [[] for _ in vectors]
        asked = [
            (i, self._checked(unit_vector(vector, "<query>"), "<query>"))
            for i, vector in enumerate(vectors)
        ]
        # A zero vector has no direction: nothing is similar to it.
        asked = [(i, query) for i, query in asked if np.any(query)]
        if limit <= 0 or not asked:
            return found
        await self._follow()
        index = self.index(collection)
        for start in range(0, len(asked), MSEARCH_PAGE):
            page = asked[start : start + MSEARCH_PAGE]
            searches: list[dict[str, Any]] = []
            for _, query in page:
                knn = queries.knn_clause(workspace, query, search_filter, limit)
                searches += [
                    {"index": index},
                    {
                        "knn": knn,
                        "size": knn["k"],
                        "_source": {"excludes": list(codec.HIT_EXCLUDES[:2])},
                        "track_total_hits": False,
                    },
                ]
            response = await self._client.msearch(searches=searches)
            for (i, query), answer in zip(page, response["responses"], strict=True):
                if "error" in answer:
                    raise ApiError(str(answer["error"]), response.meta, answer)
                found[i] = exact_hits(answer["hits"]["hits"], query, min_score)
        return found


def exact_hits(raw: Sequence[Mapping[str, Any]], query: Vector, min_score: float) -> list[Hit]:
    """Hits scored by their exact cosine (vectors are unit length), best first, id breaking
    ties, those under `min_score` dropped."""
    hits = []
    for item in raw:
        record = codec.hit_record(item["_source"])
        score = float(np.dot(codec.decode_vector(item["_source"]["vector_b64"]), query))
        if score >= min_score:
            hits.append(Hit(record, score))
    hits.sort(key=lambda hit: (-hit.score, hit.record.id))
    return hits
