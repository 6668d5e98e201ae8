"""The extractive answer with a reranker: the rerank test server (Jina's API) orders the
sentences the match rule offers, and a failing reranker leaves the rule's order."""

from __future__ import annotations

from collections.abc import Sequence

from ragstream.common.config_rerank import RerankConfig
from ragstream.common.providers.rerank import HttpReranker
from ragstream.query.sentences import Quote, rerank_quotes
from ragstream.testing.rerank_server import RerankTestServer

QUOTES = [
    Quote("The Tern sensor team moved to Tromso.", "1", 3.0),
    Quote("Mira Okafor leads the Tern sensor team.", "2", 2.0),
    Quote("The team ships firmware every two weeks.", "3", 1.0),
]


def prefers_okafor(query: str, documents: Sequence[str]) -> list[float]:
    return [1.0 if "Okafor" in d else 0.1 for d in documents]


async def test_the_reranker_orders_the_quotes_and_its_failure_keeps_the_match_order() -> None:
    async with RerankTestServer(scorer=prefers_okafor) as server:
        cfg = RerankConfig.model_validate(
            {"provider": "jina", "model": "test-rerank", "base_url": server.url("jina"),
             "api_key": "secret", "backoff_s": 0.001, "timeout_s": 2.0, "max_attempts": 1,
             "cache_size": 0}
        )  # fmt: skip
        reranker = HttpReranker(cfg)
        try:
            ranked = await rerank_quotes(reranker, "Who leads the Tern team?", QUOTES, 2)
            server.fail_next(5)
            fallback = await rerank_quotes(reranker, "Who leads the Tern team?", QUOTES, 2)
        finally:
            await reranker.close()
    assert [q.reference_id for q in ranked] == ["2", "1"]
    assert [q.reference_id for q in fallback] == ["1", "2"]
