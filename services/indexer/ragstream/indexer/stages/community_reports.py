"""Community reports: by the LLM in GraphRAG's community report format, or, with no LLM
configured, by the extractive builder (communities/reports.py). The LLM's prompt lists the
members and relations in key order, so the same content is the same prompt, served by the
LLM cache; the community step asks for a report only when the content key changed.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

from ragstream.common.communities import Finding, Report
from ragstream.common.config import LLMConfig
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import CacheStore
from ragstream.indexer.communities.reports import (
    MAX_EXPLANATION_CHARS,
    CommunityContent,
    content_key,
    extractive_report,
)
from ragstream.indexer.stages.extract.llm_calls import CachedChat

MAX_TABLE_ROWS = 60
"""Members and relations listed in one prompt, best-connected and heaviest first."""
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

REPORT_PROMPT = """You are an AI assistant that helps a human analyst to perform general \
information discovery: identifying and assessing relevant information associated with \
certain entities (organizations, people, products, places) within a network.

# Goal
Write a comprehensive report of a community, given a list of entities that belong to the \
community and their relationships. The report informs decision-makers about the \
information associated with the community and its potential impact. It includes an \
overview of the community's key entities, their notable claims, and their relations.

# Report structure
Return a JSON object, and nothing else, of this form:
{"title": "<short specific name of the community, naming key entities>",
 "summary": "<executive summary of the community's overall structure, how its entities \
relate to each other, and significant information associated with them>",
 "rating": <float 0-10: the importance of the community's content>,
 "rating_explanation": "<one sentence explaining the rating>",
 "findings": [{"summary": "<insight summary>",
               "explanation": "<explanation grounded in the data below>",
               "entities": [<ids of the entities it rests on>],
               "relationships": [<ids of the relationships it rests on>]}]}
Give 3 to 5 findings. Do not include information for which the data gives no evidence.

# Data
"""


class ReportWriter(Protocol):
    name: str

    async def write(self, content: CommunityContent) -> Report:
        """The community's report, its `content_key` that of `content`."""
        ...


class ExtractiveReportWriter:
    """Offline: the extractive builder, which invents nothing."""

    name = "extractive"

    async def write(self, content: CommunityContent) -> Report:
        return extractive_report(content)


class ReportFormatError(ValueError):
    """The model's report is not the JSON object the prompt asks for."""


class LLMReportWriter:
    """Reports by the configured LLM, cached by prompt (so by content)."""

    def __init__(self, chat: ChatModel, cache: CacheStore, model: str, llm: LLMConfig) -> None:
        self._calls = CachedChat(chat, cache, model, llm)
        self.name = f"llm:{model}"

    async def write(self, content: CommunityContent) -> Report:
        if not content.nodes:  # nothing to report on: no call
            return extractive_report(content)
        messages = [ChatMessage("user", REPORT_PROMPT + data_tables(content))]
        reply = await self._calls.ask(messages)
        report = parse_report(reply.text, content, self.name)
        await self._calls.remember(reply)
        return report


def data_tables(content: CommunityContent) -> str:
    """GraphRAG's context: an Entities table and a Relationships table, ids by position."""
    nodes = content.ranked_nodes()[:MAX_TABLE_ROWS]
    edges = content.ranked_edges()[:MAX_TABLE_ROWS]
    rows = ["Entities", "id,entity,type,description"]
    rows += [f"{i},{n.name},{n.type},{_cell(n.description)}" for i, n in enumerate(nodes)]
    rows += ["", "Relationships", "id,source,target,description"]
    rows += [f"{i},{e.source},{e.target},{_cell(e.description)}" for i, e in enumerate(edges)]
    return "\n".join(rows) + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split())[:MAX_EXPLANATION_CHARS]


def parse_report(text: str, content: CommunityContent, writer: str) -> Report:
    """The report in the model's reply; findings' ids mapped back to keys and chunks."""
    found = _JSON_OBJECT.search(text)
    try:
        data = json.loads(found.group(0) if found else text)
    except json.JSONDecodeError as error:
        raise ReportFormatError(f"the community report is not JSON: {error}") from None
    if not isinstance(data, dict) or not str(data.get("title", "")).strip():
        raise ReportFormatError("the community report has no title")
    nodes, edges = content.ranked_nodes()[:MAX_TABLE_ROWS], content.ranked_edges()[:MAX_TABLE_ROWS]
    findings = tuple(
        _finding(item, nodes, edges) for item in data.get("findings", []) if isinstance(item, dict)
    )
    return Report(
        title=str(data["title"]).strip(), summary=str(data.get("summary", "")).strip(),
        findings=findings, rating=_rating(data.get("rating")),
        rating_explanation=str(data.get("rating_explanation", "")).strip(),
        content_key=content_key(content), writer=writer,
    )  # fmt: skip


def _finding(item: dict[str, Any], nodes: list[Any], edges: list[Any]) -> Finding:
    entity_rows = [nodes[i] for i in _ids(item.get("entities"), len(nodes))]
    edge_rows = [edges[i] for i in _ids(item.get("relationships"), len(edges))]
    chunks = dict.fromkeys(c for row in [*entity_rows, *edge_rows] for c in row.source_ids[:3])
    return Finding(
        str(item.get("summary", "")).strip(), str(item.get("explanation", "")).strip(),
        tuple(n.key for n in entity_rows), tuple(e.key for e in edge_rows), tuple(chunks),
    )  # fmt: skip


def _ids(value: object, size: int) -> list[int]:
    if not isinstance(value, list):
        return []
    return sorted({int(v) for v in value if str(v).isdigit() and int(v) < size})


def _rating(value: object) -> float:
    try:
        return min(10.0, max(0.0, float(str(value))))
    except ValueError:
        return 0.0
