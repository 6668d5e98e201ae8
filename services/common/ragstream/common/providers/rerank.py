"""Rerankers: cross-encoder APIs that score (query, chunk) pairs after retrieval.

One client, `HttpReranker`, speaks the API formats in use, chosen by `rerank.provider`:

- flat (jina, cohere): POST `{"model", "query", "documents": [str], "top_n"}`, answered with
  `{"results": [{"index", "relevance_score", ...}], ...}`;
- nested (aliyun, DashScope text-rerank): POST `{"model", "input": {"query", "documents"},
  "parameters": {"top_n", "return_documents": false}}`, answered with
  `{"output": {"results": [{"index", "relevance_score", ...}]}, ...}`.

Long texts are sliced to the model's window and their slice scores aggregated
(`rerank_slices`); all slices of one call go out in one request (several when there are more
than `batch_documents`). `top_n` always asks for every slice's score: the caller, not the
server, decides how many chunks to keep. Scores are cached per (model, query, text), so a
repeated query costs no request. With `rerank.provider = "none"` `build_reranker` returns None
and the query pipeline skips the step, saying so in the response.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ragstream.common.config_rerank import RerankConfig
from ragstream.common.providers import ProviderError
from ragstream.common.providers.endpoint import JsonEndpoint, RetryPolicy
from ragstream.common.providers.rerank_slices import aggregate, plan_slices

NESTED_PROVIDERS = frozenset({"aliyun"})


class Reranker(Protocol):
    @property
    def name(self) -> str:
        """Provider and model, e.g. "jina:jina-reranker-v2-base-multilingual"."""
        ...

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, in input order (higher is more relevant).
        Raises ProviderError when the provider fails after its retries."""
        ...

    async def close(self) -> None: ...


class ScoreCache:
    """Scores by key, at most `size` of them (least recently used dropped first), each kept
    for `ttl_s` seconds: a reranker's scores change only with the model behind the endpoint."""

    def __init__(
        self, size: int, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._size = size
        self._ttl_s = ttl_s
        self._clock = clock
        self._entries: OrderedDict[bytes, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: bytes) -> float | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, score = entry
        if expires <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return score

    def put(self, key: bytes, score: float) -> None:
        if self._size == 0:
            return
        self._entries[key] = (self._clock() + self._ttl_s, score)
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)


def request_body(provider: str, model: str, query: str, documents: Sequence[str]) -> dict[str, Any]:
    """The request in the provider's format, asking for every document's score."""
    if provider in NESTED_PROVIDERS:
        return {
            "model": model,
            "input": {"query": query, "documents": list(documents)},
            "parameters": {"top_n": len(documents), "return_documents": False},
        }
    return {"model": model, "query": query, "documents": list(documents), "top_n": len(documents)}


def parse_scores(provider: str, payload: object, count: int) -> list[float]:
    """One score per document sent (`count`), from an answer in the provider's format.
    Fields other than index and relevance_score (Jina's document, usage, ids) are ignored."""
    container = payload
    if provider in NESTED_PROVIDERS:
        container = payload.get("output") if isinstance(payload, dict) else None
    results = container.get("results") if isinstance(container, dict) else None
    if not isinstance(results, list):
        where = "output.results" if provider in NESTED_PROVIDERS else "results"
        raise ValueError(f"the answer has no {where} list")
    scores: list[float | None] = [None] * count
    for item in results:
        index = item.get("index") if isinstance(item, dict) else None
        score = item.get("relevance_score") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count:
            raise ValueError(f"result {item!r} has no index within 0..{count - 1}")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ValueError(f"result {item!r} has no numeric relevance_score")
        scores[index] = float(score)
    missing = [i for i, score in enumerate(scores) if score is None]
    if missing:
        raise ValueError(f"{len(missing)} of {count} documents got no score (first: {missing[0]})")
    return [score for score in scores if score is not None]


class HttpReranker:
    """A reranker behind an HTTP API in the flat (Jina, Cohere) or nested (Aliyun) format."""

    def __init__(self, cfg: RerankConfig, *, clock: Callable[[], float] = time.monotonic) -> None:
        if cfg.provider == "none":
            raise ValueError("HttpReranker needs a rerank.provider other than 'none'")
        self.name = f"{cfg.provider}:{cfg.model}"
        self._cfg = cfg
        self._cache = ScoreCache(cfg.cache_size, cfg.cache_ttl_s, clock)
        self._endpoint = JsonEndpoint(
            f"reranker {self.name}",
            cfg.base_url,
            cfg.api_key,
            cfg.timeout_s,
            RetryPolicy(cfg.max_attempts, cfg.backoff_s),
        )

    async def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        keys = [self._key(query, text) for text in texts]
        scores = [self._cache.get(key) for key in keys]
        missing = [i for i, score in enumerate(scores) if score is None]
        if missing:
            fresh = await self._score(query, [texts[i] for i in missing])
            for i, score in zip(missing, fresh, strict=True):
                scores[i] = score
                self._cache.put(keys[i], score)
        return [score for score in scores if score is not None]

    async def close(self) -> None:
        await self._endpoint.close()

    def _key(self, query: str, text: str) -> bytes:
        cfg = self._cfg
        digest = hashlib.blake2b(digest_size=20)
        for part in (
            self.name,
            f"{cfg.window_tokens}/{cfg.overlap_tokens}/{cfg.aggregation}",
            query,
            text,
        ):
            data = part.encode()
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
        return digest.digest()

    async def _score(self, query: str, texts: Sequence[str]) -> list[float]:
        cfg = self._cfg
        plan = plan_slices(texts, cfg.window_tokens, cfg.overlap_tokens)
        size = cfg.batch_documents
        batches = [plan.slices[start : start + size] for start in range(0, len(plan.slices), size)]
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._call(query, batch)) for batch in batches]
        except* ProviderError as failed:
            # The other batches are cancelled; the first failure says what went wrong.
            raise failed.exceptions[0] from None
        slice_scores = [score for task in tasks for score in task.result()]
        return aggregate(slice_scores, plan.owners, len(texts), cfg.aggregation)

    async def _call(self, query: str, documents: Sequence[str]) -> list[float]:
        body = request_body(self._cfg.provider, self._cfg.model, query, documents)
        payload = await self._endpoint.post("", body)
        try:
            return parse_scores(self._cfg.provider, payload, len(documents))
        except ValueError as exc:
            raise self._endpoint.error(f"unexpected answer: {exc}") from exc


def build_reranker(cfg: RerankConfig) -> Reranker | None:
    """None when `rerank.provider` is "none": the query pipeline then skips reranking."""
    if cfg.provider == "none":
        return None
    return HttpReranker(cfg)
