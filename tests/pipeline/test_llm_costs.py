"""What the knowledge graph costs in LLM calls, counted at the local OpenAI-compatible server.

The scripted model answers extraction prompts with records for the capitalized names of the
passage, gleaning prompts with nothing new, and summary prompts with a fixed sentence.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from ragstream.common.events import DocumentChange
from ragstream.testing.openai_server import OpenAITestServer
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline
from tests.support.scripted_llm import check, kind, passage_of, report

WS = "costs"
SHARED = "Halvorsen Aquatics"
_NAME = re.compile(r"\b([A-Z][a-z]+ [A-Z][a-z]+)\b")


def responder(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    if kind(messages) == "check":
        return check(messages)
    if kind(messages) == "report":
        return report(messages)
    if kind(messages) == "summary":
        return f"{SHARED} is a company described in several documents."
    if kind(messages) == "gleaning":
        return "<|COMPLETE|>"
    passage = passage_of(messages)
    names = list(dict.fromkeys(_NAME.findall(passage)))[:6]
    lines = [
        f"entity<|#|>{n}<|#|>organization<|#|>{n} appears in: {passage[:60].strip()}" for n in names
    ]
    lines += [
        f"relation<|#|>{a}<|#|>{b}<|#|>mentioned together<|#|>{a} and {b} appear together."
        for a, b in itertools.pairwise(names)
    ]
    return "\n".join([*lines, "<|COMPLETE|>"])


def calls(server: OpenAITestServer) -> dict[str, int]:
    counts = {"extraction": 0, "gleaning": 0, "summary": 0, "report": 0, "check": 0}
    for body in server.log.bodies.get("chat", []):
        counts[kind(body["messages"])] += 1
    return counts


def paragraph(i: int) -> str:
    return (
        f"{SHARED} opened office number {i} in Town{i}. Director Person{chr(65 + i)} Leader{i} "
        f"runs it with engineer Staff{i} Member{i}. The office builds sensor series {i} for "
        f"customers along the coast, and reports to the board every quarter of the year."
    )


@pytest.fixture
async def server() -> AsyncIterator[OpenAITestServer]:
    async with OpenAITestServer(responder=responder) as running:
        yield running


def llm_settings(tmp_path: Path, server: OpenAITestServer, **extra: Any) -> Any:
    return embedded_settings(
        tmp_path,
        llm={"provider": "openai", "model": "test-model", "base_url": server.base_url,
             "api_key": "sk-test"},
        chunking={"chunk_tokens": 120, "overlap_tokens": 10},
        **extra,
    )  # fmt: skip


async def status(pipeline: Pipeline, doc_id: str) -> Any:
    record = await pipeline.backends.stores.docs.get(WS, doc_id)
    assert record is not None
    return record


async def test_extraction_costs_one_call_per_new_chunk(
    tmp_path: Path, server: OpenAITestServer
) -> None:
    text = "\n\n".join(paragraph(i) for i in range(10))
    async with running_pipeline(llm_settings(tmp_path, server)) as pipeline:
        await pipeline.publish([DocumentChange(WS, "doc", 1, False, text, "doc.md")])
        await pipeline.idle()
        first = calls(server)
        chunks = len((await status(pipeline, "doc")).chunk_ids)
        assert chunks >= 6
        assert first["extraction"] == chunks
        assert first["gleaning"] <= chunks

        await pipeline.publish([DocumentChange(WS, "doc", 1, False, text, "doc.md")])
        await pipeline.publish([DocumentChange(WS, "doc", 2, False, text, "doc.md")])
        await pipeline.idle()
        assert calls(server) == first  # a replay and an unchanged new version cost nothing

        edited = text.replace("office number 4 in Town4", "office number 4 in Harbourtown")
        await pipeline.publish([DocumentChange(WS, "doc", 3, False, edited, "doc.md")])
        await pipeline.idle()
        after = calls(server)
        assert after["extraction"] - first["extraction"] <= 2
        assert after["gleaning"] - first["gleaning"] <= 2
        # Only the shared entity has more than 8 fragments; its fragments changed once.
        assert after["summary"] - first["summary"] <= 1
        assert (await status(pipeline, "doc")).state == "processed"


async def test_deleting_85_of_100_documents_summarizes_each_key_once(
    tmp_path: Path, server: OpenAITestServer
) -> None:
    docs = [
        DocumentChange(
            WS, f"d{i:03d}", 1, False, paragraph(i % 26) + f" Memo{i} Entry{i}.", f"d{i}"
        )
        for i in range(100)
    ]
    async with running_pipeline(llm_settings(tmp_path, server)) as pipeline:
        await pipeline.publish(docs)
        await pipeline.idle()
        before = calls(server)
        await pipeline.publish([DocumentChange(WS, d.doc_id, 2, True) for d in docs[:85]])
        await pipeline.idle()
        after = calls(server)
        shared = await pipeline.backends.stores.graph.get_nodes(WS, [SHARED.casefold()])
    summaries = after["summary"] - before["summary"]
    print(f"summary calls for deleting 85 of 100 documents: {summaries} (LightRAG: 1,593)")
    # The shared entity is the one touched key still over the threshold (15 fragments left).
    assert summaries <= 1
    assert after["extraction"] == before["extraction"]  # deletes never re-extract
    assert shared and shared[0].doc_ids == tuple(sorted(d.doc_id for d in docs[85:]))


async def test_a_failed_extraction_marks_the_document_failed_and_leaves_nothing(
    tmp_path: Path, server: OpenAITestServer
) -> None:
    def broken_for_one(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
        if "Unparseable" in str(messages[-1].get("content", "")) and kind(messages) == "extraction":
            return "I would rather not list records for this passage."
        return responder(messages, body)

    server.set_responder(broken_for_one)
    async with running_pipeline(llm_settings(tmp_path, server)) as pipeline:
        await pipeline.publish(
            [
                DocumentChange(WS, "good", 1, False, paragraph(1), "good.md"),
                DocumentChange(
                    WS, "bad", 1, False, "Unparseable Passage about Marigold.", "bad.md"
                ),
            ]
        )
        await pipeline.idle()
        dump = await pipeline.dump(WS)
    good, bad = dump["documents"]["good"], dump["documents"]["bad"]
    assert good[1] == "processed" and bad[1] == "failed"
    assert bad[6] == "entity extraction failed: the model's reply held no records"
    assert all(record[3] == ("good",) for record in dump["chunks"].values())
    assert not any(m.doc_id == "bad" for ms in dump["mentions"].values() for m in ms)
