"""Entity resolution on Elasticsearch: the ledger's same-as evidence and the resolved
entities' aliases round-trip through the Elasticsearch stores as through the embedded ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragstream.common.models import Collection, relation_key
from ragstream.common.storage.elastic import IndexLayout
from tests.pipeline.test_resolution import DOCS, WS, change
from tests.support.elasticsearch import ElasticsearchNode
from tests.support.pipeline import embedded_settings, running_pipeline

pytestmark = pytest.mark.integration
KEYS = ["ibm", "international business machines", "hugo chavez", "hugo chávez"]


async def test_resolution_merges_and_splits_on_elasticsearch(
    elasticsearch_node: ElasticsearchNode, layout: IndexLayout, tmp_path: Path
) -> None:
    settings = embedded_settings(
        tmp_path,
        storage={"search": "elasticsearch"},
        elasticsearch={"hosts": [elasticsearch_node.url], "index_prefix": layout.prefix},
    )
    async with running_pipeline(settings) as pipeline:
        search = pipeline.backends.stores.search
        await pipeline.publish([change(d, 1, text) for d, text in DOCS.items()])
        await pipeline.idle()
        merged = {r.id: r for r in await search.get(Collection.ENTITIES, WS, KEYS)}
        edge = await search.get(Collection.RELATIONS, WS, [relation_key("ibm", "lenovo")])
        await pipeline.publish([change("a", 2, None)])
        await pipeline.idle()
        split = {r.id: r for r in await search.get(Collection.ENTITIES, WS, KEYS)}

    assert set(merged) == {"ibm", "hugo chavez"}
    assert merged["ibm"].attrs["members"] == ["ibm", "international business machines"]
    assert merged["ibm"].attrs["aliases"] == ["International Business Machines"]
    assert set(merged["ibm"].doc_ids) == {"a", "b", "c"}
    assert edge
    assert set(split) == {"ibm", "international business machines", "hugo chavez"}
    assert "members" not in split["ibm"].attrs
    assert split["international business machines"].doc_ids == ("c",)
