"""The `community` query mode (GraphRAG's global search) over the community reports.

Reports are found by hybrid search (BM25 + dense, RRF) of the `communities` collection and
chosen from the top level down (community_selection.py). With an LLM: each chosen report
is asked for the points it makes about the question, rated 0-100 (map, concurrently); the
best points that fit the token budget are then written into one answer (reduce, streamed),
which cites the reports by community id. At most `max_llm_calls` calls in all. Without an
LLM: the chosen reports' key findings, best report first.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass, field

from ragstream.common.communities import CommunityRecord
from ragstream.common.models import Collection, SearchFilter, Vector
from ragstream.common.providers.llm import ChatMessage, ChatModel
from ragstream.common.storage.protocols import CommunityStore, SearchStore
from ragstream.common.text.analyzer import analyze
from ragstream.common.text.tokens import count_tokens
from ragstream.query.community_selection import select
from ragstream.query.lease import remote
from ragstream.query.search import SearchSpec, hybrid_search

MAP_PROMPT = """You are a helpful assistant responding to questions about data in the \
report below. List the key points of the report that help answer the user's question. \
Return a JSON object and nothing else: {"points": [{"description": "<a point, with what \
supports it>", "score": <0-100: how much it helps answer the question>}]}. A report that \
does not help gives {"points": []}.

# Report
"""
REDUCE_PROMPT = """You are a helpful assistant responding to questions about a dataset by \
synthesizing perspectives from multiple analysts, each of whom read one community report. \
Write one answer to the user's question from the analysts' points below, most important \
first, in markdown. Cite each point you use by its report as [Data: Reports (<report id>)]. \
Do not include information for which the points give no evidence.

# Points
"""
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True, slots=True)
class CommunityBudget:
    max_reports: int = 8
    """Reports read (one map call each)."""
    max_llm_calls: int = 9
    """Map calls plus the reduce call."""
    max_tokens: int = 6000
    """Tokens of points given to the reduce call (and of findings offline)."""
    candidates: int = 30
    """Reports each search contributes before fusion."""


@dataclass(frozen=True, slots=True)
class Point:
    community_id: str
    text: str
    score: float


@dataclass(slots=True)
class CommunityContext:
    """What the map step found: the chosen reports and their points, best first."""

    reports: list[CommunityRecord]
    points: list[Point] = field(default_factory=list)
    llm_calls: int = 0

    @property
    def cited(self) -> list[str]:
        """The community ids of the points an answer rests on, in first-use order."""
        return list(dict.fromkeys(p.community_id for p in self.points))


class CommunitySearch:
    def __init__(
        self,
        search: SearchStore,
        communities: CommunityStore,
        chat: ChatModel | None,
        budget: CommunityBudget = CommunityBudget(),
    ) -> None:
        self._search = search
        self._communities = communities
        self._chat = chat
        self._budget = budget

    async def context(
        self, workspace: str, query: str, vector: Vector | None, search_filter: SearchFilter
    ) -> CommunityContext:
        """The chosen reports, and with an LLM the points each makes (the map step)."""
        b = self._budget
        spec = SearchSpec(
            workspace, analyze(query), vector, search_filter, b.candidates, b.candidates
        )
        hits = await hybrid_search(self._search, Collection.COMMUNITIES, spec)
        scores = {h.record.id: h.score for h in hits}
        records = await self._communities.list(workspace)
        limit = min(b.max_reports, b.max_llm_calls - 1) if self._chat else b.max_reports
        chosen = select(records, scores, limit)
        found = CommunityContext(chosen)
        if self._chat is not None and chosen:
            mapped = await asyncio.gather(*(self._map(query, r) for r in chosen))
            found.llm_calls = len(chosen)
            points = sorted((p for ps in mapped for p in ps), key=lambda p: -p.score)
            found.points = _fitting(points, b.max_tokens)
        return found

    async def answer(self, query: str, found: CommunityContext) -> AsyncGenerator[str, None]:
        """The reduce step, streamed; offline, the chosen reports' findings."""
        if self._chat is None:
            yield findings_answer(found.reports, self._budget.max_tokens)
            return
        if not found.points:
            yield "None of the community reports answers this question."
            return
        found.llm_calls += 1
        lines = [f"[report {p.community_id}, score {p.score:g}] {p.text}" for p in found.points]
        messages = [
            ChatMessage("system", REDUCE_PROMPT + "\n".join(lines)),
            ChatMessage("user", query),
        ]
        async with remote():
            async for delta in self._chat.stream(messages):
                yield delta

    async def _map(self, query: str, record: CommunityRecord) -> list[Point]:
        assert self._chat is not None and record.report is not None
        text = f"id: {record.id}\n{report_body(record)}"
        messages = [ChatMessage("system", MAP_PROMPT + text), ChatMessage("user", query)]
        async with remote():
            completion = await self._chat.complete(messages, max_tokens=800, temperature=0.0)
        return parse_points(completion.text, record.id)


def report_body(record: CommunityRecord) -> str:
    report = record.report
    if report is None:
        return ""
    lines = [f"# {report.title}", report.summary]
    lines += [f"- {f.summary}: {f.explanation}" for f in report.findings]
    return "\n".join(lines)


def parse_points(text: str, community_id: str) -> list[Point]:
    """The map reply's points; a reply that is not the asked-for JSON gives none."""
    found = _JSON_OBJECT.search(text)
    try:
        data = json.loads(found.group(0) if found else text)
    except json.JSONDecodeError:
        return []
    items = data.get("points", []) if isinstance(data, dict) else []
    points = []
    for item in items:
        if not isinstance(item, dict) or not str(item.get("description", "")).strip():
            continue
        try:
            score = float(item.get("score", 0))
        except (TypeError, ValueError):
            score = 0.0
        if score > 0:
            points.append(Point(community_id, str(item["description"]).strip(), score))
    return points


def _fitting(points: Sequence[Point], max_tokens: int) -> list[Point]:
    kept, used = [], 0
    for point in points:
        used += count_tokens(point.text)
        if used > max_tokens:
            break
        kept.append(point)
    return kept


def findings_answer(reports: Sequence[CommunityRecord], max_tokens: int) -> str:
    """The offline answer: each chosen report's title and findings, citing its id."""
    if not reports:
        return "No community reports were found for this question."
    parts: list[str] = []
    used = 0
    for record in reports:
        block = f"## {record.report.title if record.report else record.id} " + (
            f"[Data: Reports ({record.id})]\n{report_body(record).split(chr(10), 1)[-1]}"
        )
        used += count_tokens(block)
        if parts and used > max_tokens:
            break
        parts.append(block)
    return "\n\n".join(parts)
