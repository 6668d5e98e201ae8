"""A curated graph source of 1,000 entities and 2,000 relations through the whole indexing
pipeline, on the embedded store and on Elasticsearch: it is searchable, its entity named
like an extracted one merges with it, and deleting the source removes exactly what it
brought, the extracted entity staying as the text alone describes it."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from ragstream.common.events import DocumentChange
from ragstream.common.models import Collection, entity_key
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import Backends
from ragstream.query.graph_api import GraphReader
from ragstream.query.transport.import_graph import graph_change
from ragstream.v1 import ingest_pb2
from tests.pipeline.test_filters import store_settings
from tests.support.pipeline import Pipeline, running_pipeline

WS = "curated"
SOURCE = "crm-export"
NOTE = "notes.md"
TEXT = "Kestrel Polymers makes the battery seals of the Tern S3 drone in Ningbo."
CURATED = "Curated: the sole approved seal supplier."
NAMES = [f"Curio {i:04d}" for i in range(999)]


def curated_source() -> ingest_pb2.ImportGraphRequest:
    entities = [
        ingest_pb2.CuratedEntity(name=n, type="component", description=f"{n} is a part.")
        for n in NAMES
    ]
    entities.append(
        ingest_pb2.CuratedEntity(name="kestrel  polymers", type="organization", description=CURATED)
    )
    relations = [
        ingest_pb2.CuratedRelation(
            source=NAMES[i], target=NAMES[(i + step) % len(NAMES)], keywords="fits",
            description=f"{NAMES[i]} fits {NAMES[(i + step) % len(NAMES)]}.",
        )
        for step in (1, 2)
        for i in range(len(NAMES))
    ]  # fmt: skip
    relations += [
        ingest_pb2.CuratedRelation(source="Kestrel Polymers", target=n, description="Makes it.")
        for n in NAMES[:2]
    ]
    return ingest_pb2.ImportGraphRequest(
        workspace=WS, source_id=SOURCE, entities=entities, relations=relations
    )


async def settle(pipeline: Pipeline) -> None:
    await pipeline.idle(240)  # the source on Elasticsearch: about 50 s here
    await pipeline.refresh()


@pytest_asyncio.fixture(params=["sqlite", "elasticsearch"])
async def pipeline(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Pipeline]:
    async with running_pipeline(store_settings(request, tmp_path)) as running:
        await running.publish([DocumentChange(WS, NOTE, 1, False, TEXT, NOTE)])
        await settle(running)
        yield running


def reader(backends: Backends, pipeline: Pipeline) -> GraphReader:
    embedder = backends.providers.embeddings.view(Priority.QUERY)
    stores = backends.stores
    return GraphReader(stores.search, stores.graph, embedder, pipeline.settings.query)


async def test_a_curated_source_merges_is_searchable_and_leaves_with_its_source(
    pipeline: Pipeline,
) -> None:
    stores = pipeline.backends.stores
    extracted = await stores.graph.stats(WS, 0)
    [before] = await stores.graph.get_nodes(WS, ["kestrel polymers"])
    assert before.doc_ids == (NOTE,) and CURATED not in before.description

    request = curated_source()
    assert (len(request.entities), len(request.relations)) == (1000, 2000)
    await pipeline.publish([graph_change(request, WS)])
    await settle(pipeline)

    [merged] = await stores.graph.get_nodes(WS, ["kestrel polymers"])
    assert set(merged.doc_ids) == {NOTE, SOURCE} and CURATED in merged.description
    assert merged.type == "organization"
    imported = await stores.graph.stats(WS, 0)
    assert imported.nodes == extracted.nodes + 999
    assert imported.edges == extracted.edges + 2000
    [(hit, _)] = (await reader(pipeline.backends, pipeline).search(WS, "Curio 0421", 1))[:1]
    assert hit.node.name == "Curio 0421" and hit.node.doc_ids == (SOURCE,)
    [document] = await stores.docs.get_many(WS, [SOURCE])
    assert len(document.chunk_ids) == 3000 and document.entity_count == 1000

    await pipeline.publish([DocumentChange(WS, SOURCE, time.time_ns(), True)])  # as the API does
    await settle(pipeline)

    assert await stores.graph.stats(WS, 0) == extracted
    [after] = await stores.graph.get_nodes(WS, ["kestrel polymers"])
    assert after == before
    gone = [entity_key(n) for n in NAMES]
    assert await stores.graph.get_nodes(WS, gone) == []
    assert await stores.search.get(Collection.ENTITIES, WS, gone) == []
    hits = await reader(pipeline.backends, pipeline).search(WS, "Curio 0421", 5)
    assert all(SOURCE not in info.node.doc_ids for info, _ in hits)
