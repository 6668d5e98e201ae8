"""Entity resolution end to end on the embedded stores: groups follow the evidence present,
whatever the order of the events, and split again when their evidence is deleted."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragstream.common.config import QueryDefaults
from ragstream.common.events import DocumentChange, MergeKey
from ragstream.common.models import (
    Chunk,
    Collection,
    Mention,
    MentionKind,
    SearchFilter,
    SearchRecord,
    relation_key,
)
from ragstream.common.providers.embedding import Embedder
from ragstream.common.providers.scheduler import Priority
from ragstream.common.registry import open_backends
from ragstream.common.storage.protocols import Stores
from ragstream.common.text.analyzer import analyze
from ragstream.common.timing import StageTimer
from ragstream.indexer.resolution.evidence import SameAs, ledger_rows
from ragstream.indexer.resolution.resolver import Resolver
from ragstream.indexer.stages.extract.parser import COMPLETION_MARKER, TUPLE_DELIMITER
from ragstream.indexer.stages.merge import GraphMerger
from ragstream.indexer.stages.resolve import ResolvedMerge
from ragstream.indexer.stages.summarize import TruncatingSummarizer
from ragstream.query.graph_api import GraphReader, NotFound
from ragstream.query.main import build_engine
from ragstream.query.transport.convert import query_options
from ragstream.query.types import Mode, QueryInput
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import query_pb2
from tests.support.embedders import HeldEmbedder
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline
from tests.support.scripted_llm import passage_of

WS = "kg"
SAYS_BOTH = "International Business Machines (IBM) builds mainframes in Armonk."
DOCS = {
    "a": SAYS_BOTH,
    "b": "IBM sold its PC division to Lenovo. Hugo Chávez visited Caracas.",
    "c": "International Business Machines opened a research lab in Zurich. "
    "Hugo Chavez met Fidel Castro in Havana.",
}


def change(doc_id: str, version: int, content: str | None) -> DocumentChange:
    if content is None:
        return DocumentChange(WS, doc_id, version, deleted=True)
    return DocumentChange(WS, doc_id, version, False, content, f"{doc_id}.md", {}, 1.0)


def groups(dump: dict[str, Any]) -> dict[str, list[str]]:
    """Entity key -> the member keys merged into it (itself alone when none)."""
    return {key: record[6].get("members", [key]) for key, record in dump["entities"].items()}


async def test_deleting_the_only_evidence_splits_the_group(tmp_path: Path) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish([change(d, 1, text) for d, text in DOCS.items()])
        await pipeline.idle()
        merged = await pipeline.dump(WS)
        await pipeline.publish([change("a", 2, None)])
        await pipeline.idle()
        split = await pipeline.dump(WS)

    assert groups(merged)["ibm"] == ["ibm", "international business machines"]
    assert "international business machines" not in merged["entities"]
    ibm = merged["entities"]["ibm"]
    assert ibm[6]["aliases"] == ["International Business Machines"]
    assert set(ibm[3]) == {"a", "b", "c"}
    assert relation_key("ibm", "lenovo") in merged["relations"]
    assert groups(merged)["hugo chavez"] == ["hugo chavez", "hugo chávez"]
    # A relation of a merged member re-points to its group: "International Business
    # Machines ... in Zurich" and "Hugo Chávez visited Caracas" hang on the canonical keys.
    relations, edges = merged["relations"], {(e.source, e.target) for e in merged["edges"]}
    assert relation_key("ibm", "zurich") in relations
    assert relation_key("caracas", "hugo chavez") in relations
    assert relation_key("international business machines", "zurich") not in relations
    assert relation_key("caracas", "hugo chávez") not in relations
    assert {("ibm", "zurich"), ("caracas", "hugo chavez")} <= edges

    assert groups(split)["ibm"] == ["ibm"]
    assert groups(split)["international business machines"] == ["international business machines"]
    assert split["entities"]["ibm"][3] == ("b",)
    assert split["entities"]["international business machines"][3] == ("c",)
    assert "aliases" not in split["entities"]["ibm"][6]
    node_keys = {n.key for n in split["nodes"]}
    assert {"ibm", "international business machines"} <= node_keys
    # Evidence that does not hang on document a keeps its group.
    assert groups(split)["hugo chavez"] == ["hugo chavez", "hugo chávez"]
    # The member that left gets its own relation back (its edge was deleted when it joined).
    assert relation_key("international business machines", "zurich") in split["relations"]
    assert relation_key("ibm", "zurich") not in split["relations"]
    assert ("international business machines", "zurich") in {
        (e.source, e.target) for e in split["edges"]
    }


async def test_a_pinyin_spelling_joins_only_while_the_latin_entity_lives(tmp_path: Path) -> None:
    chinese = change("z", 1, "研究所在宁波举办研讨会，宁波的团队参加。")
    english = change("e", 1, "The workshop took place in Ningbo.")
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish([chinese, english])
        await pipeline.idle()
        joined = await pipeline.dump(WS)
        await pipeline.publish([change("e", 2, None)])
        await pipeline.idle()
        alone = await pipeline.dump(WS)
    assert groups(joined)["ningbo"] == ["ningbo", "宁波"]
    assert joined["entities"]["ningbo"][6]["aliases"] == ["宁波"]
    assert "ningbo" not in alone["entities"]
    assert groups(alone)["宁波"] == ["宁波"]
    assert alone["entities"]["宁波"][3] == ("z",)


async def _final_dump(tmp_path: Path, events: list[DocumentChange], batch: int) -> Any:
    settings = embedded_settings(tmp_path, indexer={"merge_batch_size": batch})
    async with running_pipeline(settings) as pipeline:
        for start in range(0, len(events), 2):
            await pipeline.publish(events[start : start + 2])
        await pipeline.idle()
        return await pipeline.dump(WS)


def _history() -> list[DocumentChange]:
    return [
        *(change(d, 1, text) for d, text in DOCS.items()),
        change("a", 2, None),
        change("d", 1, "Lenovo (LNV) bought the ThinkPad line from IBM Corp."),
        change("a", 3, SAYS_BOTH + " Hugo Chavez spoke there."),
        # Chinese names: glossed in Latin, spelled in pinyin, a country's Chinese name.
        change("z", 1, "研究所高级工程师周明哲（Zhou Mingzhe）在宁波工作，去年访问了挪威。"),
        change("e", 1, "Zhou Mingzhe flew from Ningbo to Norway."),
        change("e", 2, None),
        change("e", 3, "Zhou Mingzhe flew from Ningbo to Norway in May."),
        # Written-out short forms, another word order, a name without its middle name.
        change("u", 1, "The US Congress ratified the Versailles Treaty. Paul Stevens voted."),
        change("v", 1, "The United States Congress debated the Treaty of Versailles in 1919."),
        change("w", 1, "Senator Paul David Stevens opposed the Treaty of Versailles."),
        change("w", 2, None),
        change("w", 3, "Senator Paul David Stevens opposed the Treaty of Versailles for years."),
    ]


async def test_any_order_of_the_events_gives_the_same_groups_and_stores(tmp_path: Path) -> None:
    events = _history()
    rng = random.Random(11)
    runs = []
    for run in range(3):
        by_doc: dict[str, list[DocumentChange]] = {}
        for event in events + events[: 2 * run]:
            by_doc.setdefault(event.doc_id, []).append(event)
        order = list(by_doc)
        rng.shuffle(order)
        for doc_events in by_doc.values():
            rng.shuffle(doc_events)  # a stale version arriving late is skipped
        interleaved = [e for doc in order for e in by_doc[doc]]
        runs.append(await _final_dump(tmp_path / str(run), interleaved, batch=1 + 500 * run))
    # The final version of each document alone, indexed once: what the history must equal.
    final = {e.doc_id: e for e in sorted(events, key=lambda e: e.version)}
    kept = [e for e in final.values() if not e.deleted]
    runs.append(await _final_dump(tmp_path / "final", kept, batch=7))
    first = runs[0]
    assert groups(first)["ibm"] == ["ibm", "ibm corp", "international business machines"]
    assert groups(first)["zhou mingzhe"] == ["zhou mingzhe", "周明哲"]
    assert groups(first)["ningbo"] == ["ningbo", "宁波"]
    assert groups(first)["norway"] == ["norway", "挪威"]
    assert groups(first)["united states congress"] == ["united states congress", "us congress"]
    assert groups(first)["treaty of versailles"] == ["treaty of versailles", "versailles treaty"]
    assert groups(first)["paul david stevens"] == ["paul david stevens", "paul stevens"]
    for other in runs[1:]:
        assert groups(other) == groups(first)
        for part in ("entities", "relations", "nodes", "edges", "mentions"):
            assert other[part] == first[part], part


NAMES = ("Kestrel Polymers", "KP", "Tern seal", "Lena Voss", "Bergen")


def scripted(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Extraction: the known names of the passage; keywords: the question's known names."""
    text = str(messages[-1].get("content", ""))
    if "low_level_keywords" in str(messages[0].get("content", "")) + text:
        named = [n for n in NAMES if n in text.rsplit("Query:", 1)[-1]]
        return json.dumps({"high_level_keywords": ["recall"], "low_level_keywords": named})
    if len(messages) > 2:
        return COMPLETION_MARKER
    passage, sep = passage_of(messages), TUPLE_DELIMITER
    names = [n for n in NAMES if f"{n} " in passage or f"{n})" in passage or f"{n}." in passage]
    lines = [f"entity{sep}{n}{sep}organization{sep}{n} is named here." for n in names]
    lines += [
        f"relation{sep}{a}{sep}{b}{sep}named together{sep}{a} and {b} appear together."
        for a, b in itertools.pairwise(names)
    ]
    return "\n".join([*lines, COMPLETION_MARKER])


@pytest.mark.parametrize("enabled", [True, False])
async def test_a_question_naming_one_alias_finds_chunks_naming_another(
    tmp_path: Path, enabled: bool
) -> None:
    docs = {
        "intro": "Kestrel Polymers (KP) makes marine seals in Bergen.",
        "recall": "KP recalled the Tern seal after the 2021 leak.",
        "people": "Kestrel Polymers hired Lena Voss as chief chemist.",
    }
    async with OpenAITestServer(responder=scripted) as llm:
        settings = embedded_settings(
            tmp_path,
            llm={"provider": "openai", "model": "m", "base_url": llm.base_url},
            resolution={"enabled": enabled},
            communities={"enabled": False},
        )
        async with running_pipeline(settings) as pipeline:
            await pipeline.publish([change(d, 1, text) for d, text in docs.items()])
            await pipeline.idle()
            chunks = await _local_chunks(pipeline, "Who hired Lena Voss at Kestrel Polymers?")
    found = {c.doc_id for c in chunks}
    assert "people" in found
    assert ("recall" in found) is enabled


async def _local_chunks(pipeline: Pipeline, text: str) -> list[Any]:
    return list((await _local(pipeline, text)).chunks)


async def _local(pipeline: Pipeline, text: str, doc_ids: frozenset[str] | None = None) -> Any:
    engine = build_engine(pipeline.settings, pipeline.backends)
    params = query_pb2.QueryParams(top_k=2, chunk_top_k=10)
    options = replace(query_options(params, QueryDefaults()), mode=Mode.LOCAL)
    question = QueryInput(WS, text, options, SearchFilter(doc_ids=doc_ids))
    return await engine.retrieve(question, StageTimer())


async def test_the_graph_service_answers_any_alias_with_the_resolved_entity(
    tmp_path: Path,
) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish([change(d, 1, text) for d, text in DOCS.items()])
        await pipeline.idle()
        stores = pipeline.backends.stores
        embedder = pipeline.backends.providers.embeddings.view(Priority.QUERY)
        reader = GraphReader(stores.search, stores.graph, embedder, pipeline.settings.query)
        by_alias = await reader.entity(WS, "International Business Machines")
        by_folding = await reader.entity(WS, "Hugo Chavéz")
        searched = await reader.search(WS, "International Business Machines", 3)
        around = await reader.neighbourhood(WS, "international business machines", 1, 10)
        with pytest.raises(NotFound):
            await reader.entity(WS, "Business Machines International")
        filtered = await _local(pipeline, "What did IBM build?", frozenset({"c"}))
    assert by_alias.node.key == "ibm"
    assert by_alias.aliases == ("International Business Machines",)
    assert searched[0][0].aliases == ("International Business Machines",)
    assert by_folding.node.key == "hugo chavez"
    assert searched[0][0].node.key == "ibm"
    assert around.nodes[0][0].node.key == "ibm"
    assert {info.node.key for info, _ in around.nodes} >= {"armonk", "lenovo"}
    # A document filter rebuilds the resolved entity from its members' allowed mentions.
    [ibm] = [e for e in filtered.entities if e.key == "ibm"]
    assert ibm.doc_ids == ("c",) and "Zurich" in ibm.description


async def test_deleting_a_member_that_meets_its_group_at_a_folded_key_re_derives_the_group(
    tmp_path: Path,
) -> None:
    """Neither spelling is the folded key ("ibm") where they meet: deleting the only document
    of the member that is not canonical re-derives the canonical entity without it."""
    gone = change("x", 1, "IBM Corporation makes machines in Armonk.")
    kept = change("y", 1, "IBM Corp. builds servers. IBM Corp. sells them too.")
    async with running_pipeline(embedded_settings(tmp_path / "edited")) as pipeline:
        await pipeline.publish([gone, kept])
        await pipeline.idle()
        joined = await pipeline.dump(WS)
        await pipeline.publish([change("x", 2, None)])
        await pipeline.idle()
        after = await pipeline.dump(WS)
    async with running_pipeline(embedded_settings(tmp_path / "fresh")) as pipeline:
        await pipeline.publish([kept])
        await pipeline.idle()
        fresh = await pipeline.dump(WS)
    assert groups(joined)["ibm corp"] == ["ibm corp", "ibm corporation"]
    assert groups(after)["ibm corp"] == ["ibm corp"]
    for part in ("entities", "relations", "nodes", "edges"):
        assert after[part] == fresh[part], part


async def test_offline_keywords_find_a_group_by_any_of_its_names(tmp_path: Path) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish([change(d, 1, text) for d, text in DOCS.items()])
        await pipeline.idle()
        found = await _local(pipeline, "Where did International Business Machines open a lab?")
    # The group is named IBM; the question names its alias, which is the keyword.
    assert "International Business Machines" in found.keywords.low


async def _said(stores: Stores, chunk_id: str, text: str, mentions: list[Mention]) -> None:
    """A chunk of its own document with its mentions in the ledger (as stage 1 leaves it)."""
    doc = f"doc-{chunk_id}"
    record = SearchRecord(chunk_id, WS, text, tuple(analyze(text)), np.ones(64, np.float32), (doc,))
    await stores.search.upsert(Collection.CHUNKS, [record])
    await stores.mentions.replace_chunk_mentions(
        WS, chunk_id, [replace(m, chunk_id=chunk_id, doc_id=doc) for m in mentions]
    )


def _entity(key: str, name: str) -> Mention:
    return Mention(WS, "", "", MentionKind.ENTITY, key, name, type="person", description=name)


async def test_a_relation_merged_while_its_end_joins_a_group_is_merged_again(
    tmp_path: Path,
) -> None:
    """Two stage-2 consumers: one plans the relation juche / kim il sung while Kim Il Sung
    is alone, and is held before its writes; meanwhile a new chunk says "Kim Il Sung" and
    "Kim Il-sung" are one, and the other merges that group. The held batch then writes the
    relation under the key its end no longer has; checking the groups after its writes, it
    publishes the relation again, and merging what it published re-points the relation to
    the group's canonical key. Before, nothing published it again: the relation stayed
    under the old key, or (the node gone with its edges) vanished."""
    raw = relation_key("juche", "kim il sung")
    settings = embedded_settings(tmp_path)
    async with open_backends(settings) as backends:
        stores = backends.stores
        relation = Mention(
            WS, "", "", MentionKind.RELATION, raw, source="juche", target="kim il sung",
            description="Juche honours Kim Il Sung.", keywords="honours",
        )  # fmt: skip
        mentions = [_entity("juche", "Juche"), _entity("kim il sung", "Kim Il Sung"), relation]
        await _said(stores, "c1", "Juche honours Kim Il Sung.", mentions)
        published: list[str] = []

        async def follow_ups(ws: str, keys: set[str]) -> None:
            published.extend(sorted(keys))

        def merger(embedder: Embedder) -> GraphMerger:
            resolver = Resolver(stores.mentions, stores.search)
            return GraphMerger(
                stores.mentions, stores.search, stores.graph, embedder, TruncatingSummarizer(),
                resolution=ResolvedMerge(resolver, stores.search, stores.graph, concurrent=True),
                follow_ups=follow_ups,
            )  # fmt: skip

        embedder = backends.providers.embeddings
        await merger(embedder).apply_batch([MergeKey(WS, k) for k in ("juche", "kim il sung")])
        held = HeldEmbedder(embedder)
        planned = asyncio.create_task(merger(held).apply_batch([MergeKey(WS, raw)]))
        await held.called.wait()
        text = "Kim Il-sung, also written Kim Il Sung, founded the state."
        chunk = Chunk("c2", WS, "doc-c2", text, 12, 0)
        evidence = ledger_rows(chunk, [SameAs("kim il sung", "kim il-sung", "name")])
        await _said(stores, "c2", text, [_entity("kim il-sung", "Kim Il-sung"), *evidence])
        await merger(embedder).apply_batch(
            [MergeKey(WS, k) for k in ("kim il sung", "kim il-sung")]
        )
        published.clear()
        held.release.set()
        await planned
        assert raw in published
        for _ in range(5):  # what the batches publish, merged until nothing more is
            if not published:
                break
            keys = sorted(set(published))
            published.clear()
            await merger(embedder).apply_batch([MergeKey(WS, k) for k in keys])
        assert not published
        nodes = {n.key for n in await stores.graph.get_nodes(WS, ["kim il sung", "kim il-sung"])}
        assert len(nodes) == 1  # the group's canonical entity alone
        (canonical,) = nodes
        edges = await stores.graph.get_edges(
            WS, [("juche", "kim il sung"), ("juche", "kim il-sung")]
        )
        assert [(e.source, e.target) for e in edges] == [("juche", canonical)]
