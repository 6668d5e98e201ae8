"""Real documents through conversion, indexing and retrieval on the embedded stores: the
boilerplate of a web page never reaches a chunk or the graph, front matter filters, and
every chunk knows its page and offsets, also after an edit before it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ragstream.common.config import QueryDefaults, Settings
from ragstream.common.events import DocumentChange
from ragstream.common.formats import convert
from ragstream.common.models import Collection, SearchFilter, SearchRecord
from ragstream.common.timing import StageTimer
from ragstream.query.main import build_engine
from ragstream.query.transport.convert import query_options
from ragstream.query.types import Mode, QueryInput, Retrieval
from ragstream.v1 import query_pb2
from tests.support.documents import (
    BLOG_ARTICLE,
    BLOG_BOILERPLATE,
    BLOG_PAGE,
    PAGE_QUESTIONS,
    PAGES,
    pdf_bytes,
)
from tests.support.elasticsearch import ElasticsearchNode, unique_index
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline

WS = "documents"
FRONT_MATTER = b"""---
title: Field notes
author: Ines Duarte
date: 2026-03-12
tags: [sonar, winter]
---
# Field notes

Ines Duarte replaced the Fulmar mast sonar in January.
"""


async def publish_file(pipeline: Pipeline, name: str, data: bytes, version: int = 1) -> str:
    converted = convert(Path(name), data)
    change = DocumentChange(WS, name, version, False, converted.text, name, converted.metadata)
    await pipeline.publish([change])
    await pipeline.idle()
    await pipeline.refresh()
    return converted.text


async def retrieve(
    pipeline: Pipeline, text: str, search_filter: SearchFilter | None = None
) -> Retrieval:
    options = replace(query_options(query_pb2.QueryParams(), QueryDefaults()), mode=Mode.NAIVE)
    engine = build_engine(pipeline.settings, pipeline.backends)
    q = QueryInput(WS, text, options, search_filter or SearchFilter())
    return await engine.retrieve(q, StageTimer())


async def test_a_web_pages_boilerplate_reaches_no_chunk_and_no_entity(tmp_path: Path) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await publish_file(pipeline, "blog.html", BLOG_PAGE.encode())
        dump = await pipeline.dump(WS)
    chunks = "\n".join(text for text, *_ in dump["chunks"].values())
    assert [piece for piece in BLOG_BOILERPLATE if piece in chunks] == []
    assert [piece for piece in BLOG_ARTICLE if piece not in chunks] == []
    assert {"mira okafor", "kestrel optics"} <= set(dump["entities"])
    # (the article's own table has a "Contact" column: only the footer's link is boilerplate)
    names = {"facebook", "twitter", "instagram", "terms", "contact us", "home", "careers"}
    assert names.isdisjoint(dump["entities"])


@pytest.fixture(params=["sqlite", "elasticsearch"])
def settings(request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """The embedded stores, or Elasticsearch as the search store: provenance is stored and
    read back by both."""
    if request.param == "sqlite":
        return embedded_settings(tmp_path)
    node: ElasticsearchNode = request.getfixturevalue("elasticsearch_node")
    return embedded_settings(
        tmp_path,
        storage={"search": "elasticsearch"},
        elasticsearch={"hosts": [node.url], "index_prefix": unique_index("documents")},
    )


async def chunk_records(pipeline: Pipeline, doc_id: str) -> dict[str, SearchRecord]:
    stores = pipeline.backends.stores
    record = await stores.docs.get(WS, doc_id)
    assert record is not None
    found = await stores.search.get(Collection.CHUNKS, WS, list(record.chunk_ids))
    return {chunk.id: chunk for chunk in found}


async def test_front_matter_fields_filter_and_are_in_no_chunk(settings: Settings) -> None:
    async with running_pipeline(settings) as pipeline:
        await publish_file(pipeline, "notes.md", FRONT_MATTER)
        question = "Who replaced the Fulmar mast sonar?"
        by = {"author": "Ines Duarte"}
        found = await retrieve(pipeline, question, SearchFilter(metadata=by))
        tags = {"tag:winter": "true"}
        tagged = await retrieve(pipeline, question, SearchFilter(metadata=tags))
        other = await retrieve(pipeline, question, SearchFilter(metadata={"author": "Mira"}))
        chunks = "\n".join(r.text for r in (await chunk_records(pipeline, "notes.md")).values())
        entities = await pipeline.backends.stores.search.get(Collection.ENTITIES, WS, ["field"])
    assert [c.doc_id for c in found.chunks] == ["notes.md"] == [c.doc_id for c in tagged.chunks]
    assert other.chunks == []
    assert "author" not in chunks and "2026-03-12" not in chunks and "---" not in chunks
    assert entities == []
    assert found.references[0].title == "Field notes"
    assert found.references[0].section == ("Field notes",)


async def test_each_question_about_a_pdf_cites_the_page_that_answers_it(
    settings: Settings,
) -> None:
    async with running_pipeline(settings) as pipeline:
        await publish_file(pipeline, "report.pdf", pdf_bytes(PAGES, "Tern report"))
        for question, page in PAGE_QUESTIONS.items():
            top = (await retrieve(pipeline, question)).references[0]
            assert (top.doc_id, top.first_page, top.last_page) == ("report.pdf", page, page)
            assert top.title == "Tern report"


async def test_an_edit_before_a_chunk_keeps_its_id_and_refreshes_its_offsets(
    settings: Settings,
) -> None:
    async with running_pipeline(settings) as pipeline:
        await publish_file(pipeline, "report.pdf", pdf_bytes(PAGES))
        before = await chunk_records(pipeline, "report.pdf")
        edited = ["Preface: this report was revised in June.\n\n" + PAGES[0], *PAGES[1:]]
        text = await publish_file(pipeline, "report.pdf", pdf_bytes(edited), version=2)
        after = await chunk_records(pipeline, "report.pdf")
    kept = set(before) & set(after)
    assert len(kept) == 2 and len(after) == 3  # the edited page's chunk alone is new
    for chunk_id in kept:
        attrs, old = after[chunk_id].attrs, before[chunk_id].attrs
        assert text[attrs["start"] : attrs["end"]] == after[chunk_id].text
        assert attrs["start"] > old["start"] and attrs["pages"] == old["pages"]
