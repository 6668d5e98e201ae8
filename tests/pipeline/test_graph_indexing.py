"""Knowledge-graph indexing end to end on the embedded stores (offline NLP extractor)."""

from __future__ import annotations

import contextlib
import random
from pathlib import Path
from typing import Any

import pytest

from ragstream.cli import demo_data
from ragstream.common.events import DocumentChange
from ragstream.common.models import Collection, SearchFilter, relation_key
from ragstream.common.text.analyzer import analyze
from ragstream.testing.openai_server import OpenAITestServer
from tests.pipeline.test_llm_costs import responder
from tests.support.pipeline import embedded_settings, running_pipeline

WS = "kg"
DOC_A = (
    "Mira Okafor leads the Tern sensor team at Halvorsen Aquatics. "
    "Kestrel Polymers supplied the faulty seal of the Tern S3 sensor."
)
DOC_B = (
    "Mira Okafor presented the Skua 3 drone in Bergen. "
    "Tomasz Brejcha designed the Skua 3 hull with Mira Okafor."
)


def change(doc_id: str, version: int, content: str | None) -> DocumentChange:
    if content is None:
        return DocumentChange(WS, doc_id, version, deleted=True)
    return DocumentChange(WS, doc_id, version, False, content, f"{doc_id}.md", {}, 1_700_000_000.0)


async def test_delete_removes_exactly_what_only_that_document_said(tmp_path: Path) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish([change("a", 1, DOC_A), change("b", 1, DOC_B)])
        await pipeline.idle()
        before = await pipeline.dump(WS)
        assert {"mira okafor", "kestrel polymers", "tomasz brejcha"} <= set(before["entities"])
        assert {m.doc_id for m in before["mentions"]["mira okafor"]} == {"a", "b"}

        await pipeline.publish([change("a", 2, None)])
        await pipeline.idle()
        after = await pipeline.dump(WS)
        graph = pipeline.backends.stores.graph
        assert await graph.get_nodes(WS, ["kestrel polymers"]) == []
        assert await graph.get_nodes(WS, ["mira okafor"]) != []

    assert "kestrel polymers" not in after["entities"]
    assert "kestrel polymers" not in {n.key for n in after["nodes"]}
    assert not any("kestrel polymers" in k for k in after["relations"])
    mira = after["entities"]["mira okafor"]
    assert "Tern" not in mira[0] and "Skua 3" in mira[0]
    assert mira[3] == ("b",)
    assert {m.doc_id for m in after["mentions"]["mira okafor"]} == {"b"}
    assert relation_key("mira okafor", "tomasz brejcha") in after["relations"]
    assert after["documents"]["a"][1] == "deleted"


def corpus_events() -> list[DocumentChange]:
    files = sorted(demo_data.CORPUS.iterdir())[:8]
    events = [change(f.name, 1, f.read_text(encoding="utf-8")) for f in files]
    first, second = files[0], files[1]
    edited = first.read_text(encoding="utf-8").replace(".", ". Lena Voss reviewed this.", 1)
    events.append(change(first.name, 2, edited))
    events.append(change(second.name, 2, None))
    events.append(change(second.name, 3, second.read_text(encoding="utf-8") + "\nAddendum."))
    return events


@pytest.mark.parametrize("extractor", ["nlp", "llm"])
async def test_duplicated_and_shuffled_delivery_changes_nothing(
    tmp_path: Path, extractor: str
) -> None:
    events = corpus_events()
    async with contextlib.AsyncExitStack() as stack:
        extra: dict[str, Any] = {}
        if extractor == "llm":
            llm = await stack.enter_async_context(OpenAITestServer(responder=responder))
            extra["llm"] = {"provider": "openai", "model": "m", "base_url": llm.base_url}
        clean, replayed = await _clean_and_noisy_runs(tmp_path, events, extra)
        if extractor == "llm":
            assert llm.log.completed["chat"] > 0
    assert clean["entities"] and clean["relations"] and clean["chunks"]
    for part in ("documents", "chunks", "entities", "relations", "nodes", "edges", "mentions"):
        assert replayed[part] == clean[part], part
    assert len(clean["documents"]) == 8


async def _clean_and_noisy_runs(
    tmp_path: Path, events: list[DocumentChange], extra: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    async with running_pipeline(embedded_settings(tmp_path / "clean", **extra)) as pipeline:
        await pipeline.publish(events)
        await pipeline.idle()
        clean = await pipeline.dump(WS)

    rng = random.Random(7)
    by_key: dict[str, list[DocumentChange]] = {}
    for event in events + events:
        by_key.setdefault(event.key, []).append(event)
    for group in by_key.values():
        rng.shuffle(group)
    noisy = [e for group in by_key.values() for e in group]
    async with running_pipeline(embedded_settings(tmp_path / "noisy", **extra)) as pipeline:
        # Batches of three make replays land in separate polls as well as within one.
        for start in range(0, len(noisy), 3):
            await pipeline.publish(noisy[start : start + 3])
        await pipeline.idle()
        replayed = await pipeline.dump(WS)
    return clean, replayed


async def test_entities_are_searchable_by_name(tmp_path: Path) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish([change("a", 1, DOC_A)])
        await pipeline.idle()
        hits = await pipeline.backends.stores.search.search_terms(
            Collection.ENTITIES, WS, analyze("Kestrel Polymers"), SearchFilter(), 5
        )
    assert hits and hits[0].record.id == "kestrel polymers"


async def test_batched_merges_write_what_merging_each_key_alone_writes(tmp_path: Path) -> None:
    events = corpus_events()
    dumps = []
    for batch in (1, 1000):
        settings = embedded_settings(tmp_path / str(batch), indexer={"merge_batch_size": batch})
        async with running_pipeline(settings) as pipeline:
            await pipeline.publish(events)
            await pipeline.idle()
            dumps.append(await pipeline.dump(WS))
    one_by_one, batched = dumps
    assert batched["entities"] and batched["relations"]
    for part in ("entities", "relations", "nodes", "edges", "mentions"):
        assert batched[part] == one_by_one[part], part
