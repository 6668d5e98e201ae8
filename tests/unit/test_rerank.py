"""HttpReranker against the rerank test server in both API formats, and the pure parts
(slicing, aggregation, answer parsing, the score cache)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from pydantic import ValidationError

from ragstream.common.config_rerank import RerankConfig
from ragstream.common.providers import ProviderError
from ragstream.common.providers.rerank import (
    HttpReranker,
    ScoreCache,
    build_reranker,
    parse_scores,
)
from ragstream.common.providers.rerank_slices import aggregate, plan_slices, slice_text
from ragstream.common.text.tokens import encoding
from ragstream.testing.rerank_server import Bm25Scorer, RerankTestServer, TermStats

PROVIDERS = ["jina", "cohere", "aliyun"]


@pytest.fixture
async def server() -> AsyncIterator[RerankTestServer]:
    async with RerankTestServer() as running:
        yield running


def config(server: RerankTestServer, provider: str = "jina", **overrides: Any) -> RerankConfig:
    values: dict[str, Any] = {
        "provider": provider,
        "model": "test-rerank",
        "base_url": server.url(provider),
        "api_key": "secret",
        "backoff_s": 0.001,
        "timeout_s": 2.0,
    }
    return RerankConfig.model_validate(values | overrides)


@pytest.fixture
async def opened() -> AsyncIterator[Callable[..., HttpReranker]]:
    made: list[HttpReranker] = []

    def make(cfg: RerankConfig, **kwargs: Any) -> HttpReranker:
        made.append(HttpReranker(cfg, **kwargs))
        return made[-1]

    yield make
    for reranker in made:
        await reranker.close()


def apple_share(query: str, documents: Sequence[str]) -> list[float]:
    """Scores a slice by the share of its words that are "apple"."""
    return [d.split().count("apple") / max(len(d.split()), 1) for d in documents]


def words(*runs: tuple[str, int]) -> str:
    return " ".join(word for word, count in runs for _ in range(count))


# Each word is one token, so with a 32-token window and no overlap a text of 32k words is cut
# into k slices of 32 words: (slice scores) max / mean / first.
APPLE_DOCS = {
    "C": words(("apple", 16), ("stone", 16)),  # (.5)            .5 / .5 / .5
    "D": words(("apple", 24), ("stone", 40)),  # (.75, 0)        .75 / .375 / .75
    "A": words(("apple", 32), ("stone", 64)),  # (1, 0, 0)       1 / .333 / 1
    "B": words(("stone", 32), ("apple", 28), ("stone", 4), ("apple", 28), ("stone", 4)),
    # (0, .875, .875)                                            .875 / .583 / 0
}
EXPECTED = {"max": "ABDC", "mean": "BCDA", "first": "ADCB"}


def test_the_test_words_are_one_token_each() -> None:
    assert len(encoding().encode_ordinary(APPLE_DOCS["B"])) == 96


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("how", ["max", "mean", "first"])
async def test_slices_are_scored_and_aggregated_per_text(
    server: RerankTestServer, opened: Callable[..., HttpReranker], provider: str, how: str
) -> None:
    server.set_scorer(apple_share)
    cfg = config(server, provider, window_tokens=32, overlap_tokens=0, aggregation=how)
    names = list(APPLE_DOCS)
    scores = await opened(cfg).rerank("fruit", [APPLE_DOCS[n] for n in names])
    ranking = "".join(sorted(names, key=lambda n: -scores[names.index(n)]))
    assert ranking == EXPECTED[how]
    assert server.log.total == 1  # every slice of every text in one request
    body = server.log.bodies[0]
    documents = body["input"]["documents"] if provider == "aliyun" else body["documents"]
    assert len(documents) == 1 + 2 + 3 + 3


async def test_flat_request_shape_and_bearer_auth(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    await opened(config(server, "cohere")).rerank("q", ["one", "two"])
    assert server.log.bodies[0] == {
        "model": "test-rerank",
        "query": "q",
        "documents": ["one", "two"],
        "top_n": 2,
    }
    assert server.log.authorization == ["Bearer secret"]


async def test_nested_request_shape_and_no_auth_without_key(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    await opened(config(server, "aliyun", api_key="")).rerank("q", ["one", "two"])
    assert server.log.bodies[0] == {
        "model": "test-rerank",
        "input": {"query": "q", "documents": ["one", "two"]},
        "parameters": {"top_n": 2, "return_documents": False},
    }
    assert server.log.authorization == [None]


async def test_default_scorer_is_a_relevance_signal(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    texts = [
        "Cooking pasta takes ten minutes in salted water.",
        "Vitamin D deficiency raises the risk of bone fractures in older adults.",
        "Fractures heal slowly.",
    ]
    scores = await opened(config(server)).rerank("vitamin D and bone fractures", texts)
    assert scores[1] > scores[2] > scores[0] == 0.0
    assert all(0.0 <= s < 1.0 for s in scores)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_two_503s_then_success_costs_three_calls(
    server: RerankTestServer, opened: Callable[..., HttpReranker], provider: str
) -> None:
    server.fail_next(2, status=503)
    scores = await opened(config(server, provider)).rerank("bone", ["bone density", "pasta"])
    assert scores[0] > scores[1]
    assert server.log.total == 3
    assert sum(server.log.failed.values()) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_gives_up_after_three_attempts(
    server: RerankTestServer, opened: Callable[..., HttpReranker], provider: str
) -> None:
    server.fail_next(5, status=500)
    with pytest.raises(ProviderError, match=r"HTTP 500.*after 3 attempts"):
        await opened(config(server, provider)).rerank("q", ["text"])
    assert server.log.total == 3


async def test_client_errors_are_not_retried(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    server.fail_next(1, status=401)
    with pytest.raises(ProviderError, match="HTTP 401"):
        await opened(config(server)).rerank("q", ["text"])
    assert server.log.total == 1


async def test_429_is_retried_after_retry_after(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    server.fail_next(1, status=429, retry_after_s=0.2)
    started = time.monotonic()
    await opened(config(server)).rerank("q", ["text"])
    assert time.monotonic() - started >= 0.2
    assert server.log.total == 2


async def test_dropped_connections_and_timeouts_are_retried(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    server.fail_next(2, status=None)
    await opened(config(server)).rerank("q", ["text"])
    assert server.log.total == 3
    server.set_latency(1.0)
    with pytest.raises(ProviderError, match=r"no answer within 0.1 s \(after 3 attempts\)"):
        await opened(config(server, timeout_s=0.1)).rerank("q", ["text"])
    assert server.log.total == 6


async def test_unreachable_endpoint_is_a_provider_error(
    opened: Callable[..., HttpReranker],
) -> None:
    async with RerankTestServer() as gone:
        cfg = config(gone)
    with pytest.raises(ProviderError, match="connection failed"):
        await opened(cfg).rerank("q", ["text"])


async def test_a_repeated_query_hits_the_cache(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    reranker = opened(config(server))
    texts = ["bone density", "pasta water", "bone fractures"]
    first = await reranker.rerank("bone", texts)
    assert await reranker.rerank("bone", texts) == first
    assert server.log.total == 1
    await reranker.rerank("pasta", texts)  # another query: not cached
    assert server.log.total == 2
    await reranker.rerank("bone", [*texts, "bone marrow"])  # only the new text is sent
    assert server.log.total == 3
    assert server.log.bodies[-1]["documents"] == ["bone marrow"]


async def test_cached_scores_expire(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    now = [0.0]
    reranker = opened(config(server, cache_ttl_s=60), clock=lambda: now[0])
    await reranker.rerank("bone", ["bone density"])
    now[0] = 59.0
    await reranker.rerank("bone", ["bone density"])
    assert server.log.total == 1
    now[0] = 120.0
    await reranker.rerank("bone", ["bone density"])
    assert server.log.total == 2


def test_score_cache_drops_least_recently_used() -> None:
    cache = ScoreCache(size=2, ttl_s=60)
    cache.put(b"a", 1.0)
    cache.put(b"b", 2.0)
    assert cache.get(b"a") == 1.0  # b is now the least recently used
    cache.put(b"c", 3.0)
    assert (cache.get(b"a"), cache.get(b"b"), cache.get(b"c")) == (1.0, None, 3.0)
    assert len(cache) == 2
    disabled = ScoreCache(size=0, ttl_s=60)
    disabled.put(b"a", 1.0)
    assert disabled.get(b"a") is None


async def test_many_slices_go_out_in_batches(
    server: RerankTestServer, opened: Callable[..., HttpReranker]
) -> None:
    texts = [f"bone text number {i} " + "bone " * i for i in range(7)]
    whole = await opened(config(server, cache_size=0)).rerank("bone", texts)
    batched = await opened(config(server, batch_documents=3)).rerank("bone", texts)
    assert server.log.total == 1 + 3
    assert [len(b["documents"]) for b in server.log.bodies[1:]] == [3, 3, 1]
    # The default scorer takes its statistics from each request, so compare orders only.
    assert sorted(range(7), key=lambda i: whole[i]) == sorted(range(7), key=lambda i: batched[i])


def test_parse_scores_reads_both_formats_and_tolerates_extra_fields() -> None:
    flat = {"results": [{"index": 1, "relevance_score": 0.2, "document": {"text": "x"}}]}
    flat["results"].append({"index": 0, "relevance_score": 0.9})
    assert parse_scores("jina", flat | {"usage": {}}, 2) == [0.9, 0.2]
    nested = {"output": flat, "request_id": "r"}
    assert parse_scores("aliyun", nested, 2) == [0.9, 0.2]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"output": {"results": []}}, "no results list"),
        ({"results": [{"index": 2, "relevance_score": 0.1}]}, "no index within"),
        ({"results": [{"index": 0, "relevance_score": True}]}, "no numeric relevance_score"),
        ({"results": [{"index": 0, "relevance_score": 0.5}]}, "1 of 2 documents got no score"),
    ],
)
def test_parse_scores_names_what_is_wrong(payload: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_scores("cohere", payload, 2)


def test_short_text_is_its_own_slice() -> None:
    assert slice_text("  a short text ", 480, 32) == ["  a short text "]


@pytest.mark.parametrize(("window", "overlap"), [(32, 0), (32, 4), (20, 19), (16, 5)])
def test_slices_are_overlapping_token_windows_to_the_end(window: int, overlap: int) -> None:
    enc = encoding()
    text = " ".join(["apple", "stone", "river", "cloud", "green"][i % 5] for i in range(101))
    tokens = enc.encode_ordinary(text)
    step = window - overlap
    windows = [tokens[start : start + window] for start in range(0, len(tokens) - overlap, step)]
    assert windows[-1][-1] == tokens[-1]
    assert slice_text(text, window, overlap) == [enc.decode(w) for w in windows]


def test_slicing_drops_a_character_split_across_a_border() -> None:
    text = "数据库" * 300
    slices = slice_text(text, 64, 8)
    assert len(slices) > 1
    assert all("\ufffd" not in s for s in slices)


def test_plan_and_aggregate_keep_texts_apart() -> None:
    plan = plan_slices(["short", "apple " * 70], 32, 0)
    assert plan.owners == [0, 1, 1, 1]
    assert aggregate([0.1, 0.5, 0.9, 0.4], plan.owners, 2, "max") == [0.1, 0.9]
    assert aggregate([0.1, 0.5, 0.9, 0.4], plan.owners, 2, "mean") == [0.1, 0.6]
    assert aggregate([0.1, 0.5, 0.9, 0.4], plan.owners, 2, "first") == [0.1, 0.5]
    with pytest.raises(ValueError, match="3 scores for 4 slices"):
        aggregate([0.1, 0.5, 0.9], plan.owners, 2, "max")


def test_bm25_scorer_uses_given_corpus_statistics() -> None:
    stats = TermStats.of(["bone bone", "bone pasta", "bone", "vitamin"])
    scores = Bm25Scorer(stats)("bone vitamin", ["bone", "vitamin"])
    assert scores[1] > scores[0] > 0  # vitamin is rare in the corpus, bone is not


def test_build_reranker_by_provider() -> None:
    assert build_reranker(RerankConfig()) is None
    cfg = RerankConfig.model_validate(
        {"provider": "aliyun", "model": "gte-rerank", "base_url": "http://127.0.0.1:1/x"}
    )
    reranker = build_reranker(cfg)
    assert isinstance(reranker, HttpReranker)
    assert reranker.name == "aliyun:gte-rerank"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"provider": "jina", "base_url": "http://h/v1/rerank"}, "rerank.model"),
        ({"provider": "cohere", "model": "m"}, "rerank.base_url"),
        ({"window_tokens": 32, "overlap_tokens": 32}, "overlap_tokens must be smaller"),
        ({"aggregation": "median"}, "aggregation"),
    ],
)
def test_invalid_config_is_refused(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RerankConfig.model_validate(values)
