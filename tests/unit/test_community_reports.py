"""Community reports: the content key ignores order, the extractive report rests on the
members, and the LLM's report (GraphRAG's format, through the OpenAI-compatible test server)
is parsed, mapped back to keys and chunks, and cached by content."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from ragstream.common.models import GraphEdge, GraphNode
from ragstream.common.providers.llm import OpenAIChat
from ragstream.indexer.communities.reports import (
    CommunityContent,
    content_key,
    extractive_report,
    report_text,
)
from ragstream.indexer.stages.community_reports import (
    LLMReportWriter,
    ReportFormatError,
    parse_report,
)
from ragstream.testing.openai_server import OpenAITestServer
from tests.support.chat import MemoryCache, llm_config

NODES = [
    GraphNode("mira okafor", "Mira Okafor", "person", "Leads the Tern team.\nFounded it.", ("c1",)),
    GraphNode("tern s3", "Tern S3", "product", "A sensor recalled in 2024.", ("c1", "c2")),
    GraphNode("kestrel polymers", "Kestrel Polymers", "organization", "Made the seal.", ("c2",)),
]
EDGES = [
    GraphEdge(
        "mira okafor", "tern s3", "leads", "Mira Okafor leads the Tern S3 work.", 2.0, ("c1",)
    ),
    GraphEdge("kestrel polymers", "tern s3", "supplies", "Kestrel made the S3 seal.", 5.0, ("c2",)),
]


def content(nodes: list[GraphNode] = NODES, edges: list[GraphEdge] = EDGES) -> CommunityContent:
    return CommunityContent.of("c-1", 0, nodes, edges)


def test_the_content_key_ignores_order_and_sees_every_change() -> None:
    rng = random.Random(1)
    shuffled_nodes, shuffled_edges = NODES[:], EDGES[:]
    rng.shuffle(shuffled_nodes)
    rng.shuffle(shuffled_edges)
    key = content_key(content())
    assert content_key(content(shuffled_nodes, shuffled_edges)) == key
    reordered = [
        GraphNode("mira okafor", "Mira Okafor", "person", "Founded it.\nLeads the Tern team.", ()),
        *NODES[1:],
    ]
    assert content_key(content(reordered)) == key  # fragments are a set
    edited = [GraphNode("mira okafor", "Mira Okafor", "person", "Left the team.", ()), *NODES[1:]]
    assert content_key(content(edited)) != key
    assert content_key(content(NODES, EDGES[:1])) != key


def test_the_extractive_report_rests_on_the_members() -> None:
    report = extractive_report(content())
    assert report.title == "Tern S3, Kestrel Polymers and Mira Okafor"
    assert report.summary.startswith("3 entities (1 organization, 1 person, 1 product)")
    assert report.findings[0].relations == (EDGES[1].key,)  # the heaviest relation first
    assert report.findings[0].chunks == ("c2",)
    assert {e for f in report.findings for e in f.entities} <= {n.key for n in NODES}
    assert 0.0 < report.rating <= 10.0
    assert report.writer == "extractive" and report.content_key == content_key(content())
    assert "Kestrel made the S3 seal." in report_text(report)


REPLY = {
    "title": "The Tern S3 recall",
    "summary": "Kestrel Polymers' seal failed in the Tern S3.",
    "rating": 8.5,
    "rating_explanation": "A product recall.",
    "findings": [
        {"summary": "The seal", "explanation": "Kestrel made it.", "entities": [1, 2, 99],
         "relationships": [0]},
    ],
}  # fmt: skip


def reporter(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    assert "Relationships" in messages[-1]["content"]
    return "Here it is:\n" + json.dumps(REPLY)


async def test_the_llm_report_is_mapped_back_and_cached_by_content() -> None:
    async with OpenAITestServer(responder=reporter) as server:
        chat = OpenAIChat(llm_config(server))
        try:
            writer = LLMReportWriter(chat, MemoryCache(), "test-chat", llm_config(server))
            report = await writer.write(content())
            shuffled = content(NODES[::-1], EDGES[::-1])
            again = await writer.write(shuffled)
        finally:
            await chat.close()
    assert server.log.completed["chat"] == 1  # the same content is the same prompt
    assert again == report
    assert report.title == "The Tern S3 recall" and report.rating == 8.5
    finding = report.findings[0]
    # ids are positions in the tables (best-connected entities, heaviest relations first)
    assert finding.entities == ("kestrel polymers", "mira okafor")
    assert finding.relations == (EDGES[1].key,)
    assert set(finding.chunks) == {"c1", "c2"}
    assert report.writer == "llm:test-chat"


async def test_a_community_whose_members_the_graph_no_longer_holds_is_reported_without_a_call() -> (
    None
):
    # Read while stage 2 re-points a merged entity's relations: members, but no nodes.
    empty = content([], [])
    report = extractive_report(empty)
    assert report.title == "c-1" and report.summary.startswith("0 entities")
    assert report.findings == () and report.content_key == content_key(empty)
    async with OpenAITestServer(responder=reporter) as server:
        chat = OpenAIChat(llm_config(server))
        try:
            writer = LLMReportWriter(chat, MemoryCache(), "test-chat", llm_config(server))
            assert await writer.write(empty) == report
        finally:
            await chat.close()
    assert server.log.completed.get("chat", 0) == 0


def test_a_reply_that_is_no_report_is_an_error() -> None:
    with pytest.raises(ReportFormatError, match="not JSON"):
        parse_report("no idea", content(), "llm:m")
    with pytest.raises(ReportFormatError, match="no title"):
        parse_report('{"summary": "x"}', content(), "llm:m")


def test_the_extractive_report_quotes_each_text_once() -> None:
    # Offline, the relations among the names of one sentence are all described by it.
    sentence = "Mira Okafor leads the Tern S3 work at Kestrel Polymers."
    edges = [
        GraphEdge(a, b, "", sentence, 1.0, ("c1",))
        for a, b in [("kestrel polymers", "mira okafor"), ("kestrel polymers", "tern s3"),
                     ("mira okafor", "tern s3")]
    ]  # fmt: skip
    report = extractive_report(content(NODES, edges))
    explanations = [f.explanation for f in report.findings]
    assert len(explanations) == len(set(explanations))
    assert explanations[0] == sentence
    # The rest of the findings come from the members' own descriptions.
    assert "A sensor recalled in 2024." in explanations
    assert report_text(report).count(sentence) == 1
