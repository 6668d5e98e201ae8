"""The `community` query (global search) on the demo corpus: with an LLM through the
OpenAI-compatible test server, an answer to a corpus-wide question that cites reports of at
least three communities; offline, the chosen reports' findings."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ragstream.common.config import QueryDefaults
from ragstream.common.timing import StageTimer
from ragstream.query.community_search import CommunityBudget
from ragstream.query.main import build_engine
from ragstream.query.transport.convert import query_options
from ragstream.query.types import QueryInput
from ragstream.testing.openai_server import OpenAITestServer
from ragstream.v1 import query_pb2
from tests.pipeline.test_community_indexing import WS, corpus
from tests.support import scripted_llm
from tests.support.pipeline import Pipeline, embedded_settings, running_pipeline

QUESTION = "What are the main themes across these documents?"
_REPORT_ID = re.compile(r"\[report (\S+), score")


def analyst(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """Extraction and reports as the scripted model writes them; a map prompt gets one
    point per report, a reduce prompt an answer citing every report its points name."""
    system = str(messages[0].get("content", ""))
    if system.startswith("You are a helpful assistant responding to questions about data"):
        title = system.split("# ", 2)[-1].split("\n", 1)[0]
        return json.dumps({"points": [{"description": f"Theme: {title}", "score": 60}]})
    if "synthesizing perspectives" in system:
        cited = dict.fromkeys(_REPORT_ID.findall(system))
        return "\n".join(f"- A theme [Data: Reports ({c})]" for c in cited)
    return scripted_llm.respond(messages, body)


async def ask(pipeline: Pipeline) -> tuple[str, list[str], int]:
    """The question in mode `community` through the query engine, as Query runs it."""
    engine = build_engine(pipeline.settings, pipeline.backends)
    params = query_pb2.QueryParams(mode=query_pb2.QUERY_MODE_COMMUNITY)
    q = QueryInput(WS, QUESTION, query_options(params, QueryDefaults()))
    timer = StageTimer()
    retrieval = await engine.retrieve(q, timer)
    answer = await engine.answer(q, retrieval, timer)
    found = retrieval.community
    assert found is not None and "search_communities" in dict(timer.items())
    return answer, found.cited or [r.id for r in found.reports], found.llm_calls


async def test_a_corpus_wide_question_cites_reports_of_three_communities(tmp_path: Path) -> None:
    async with OpenAITestServer(responder=analyst) as llm:
        settings = embedded_settings(
            tmp_path, llm={"provider": "openai", "model": "m", "base_url": llm.base_url}
        )
        async with running_pipeline(settings) as pipeline:
            await pipeline.publish(corpus())
            await pipeline.idle()
            answer, cited, calls = await ask(pipeline)
    ids = set(re.findall(r"\[Data: Reports \((\S+)\)\]", answer))
    assert len(ids) >= 3, answer
    assert ids == set(cited)
    assert calls <= CommunityBudget().max_llm_calls


async def test_offline_the_answer_lists_the_reports_findings(tmp_path: Path) -> None:
    async with running_pipeline(embedded_settings(tmp_path)) as pipeline:
        await pipeline.publish(corpus())
        await pipeline.idle()
        answer, chosen, calls = await ask(pipeline)
        records = await pipeline.backends.stores.communities.get(WS, chosen)
    assert calls == 0 and len(chosen) >= 3
    for record in records:
        assert record.report is not None
        assert f"[Data: Reports ({record.id})]" in answer
        assert record.report.findings[0].summary in answer
