"""The reranker's settings: `rerank` (the step in query/stages/rerank.py, the client in
providers/rerank.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator


class RerankConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: Literal["none", "jina", "cohere", "aliyun"] = "none"
    """API format of the reranker endpoint; none skips the step (responses say so).
    jina and cohere speak the flat format, aliyun (DashScope text-rerank) the nested one."""
    model: str = ""
    base_url: str = ""
    """The endpoint's full URL, e.g. ending in /v1/rerank (jina, cohere) or in
    /services/rerank/text-rerank/text-rerank (aliyun); requests are posted to it as is."""
    api_key: SecretStr = SecretStr("")
    """Sent as a Bearer token; empty sends no Authorization header (self-hosted servers)."""
    timeout_s: float = Field(10.0, gt=0)
    """Limit on one HTTP attempt."""
    max_attempts: int = Field(3, ge=1, le=10)
    """HTTP attempts per call, the first included; 408, 409, 429, 5xx, connection errors and
    timeouts are retried with exponential backoff and jitter."""
    backoff_s: float = Field(0.5, ge=0)
    """Delay before the first retry; it doubles with each further retry, up to 8 s."""
    window_tokens: int = Field(480, ge=16, le=32768)
    """Longer chunks are sliced to this many tokens, each slice scored on its own."""
    overlap_tokens: int = Field(32, ge=0)
    """Tokens shared by neighbouring slices."""
    aggregation: Literal["max", "mean", "first"] = "max"
    """How a sliced chunk's score comes from its slices' scores."""
    batch_documents: int = Field(500, ge=1, le=10000)
    """Most documents (slices) in one request; more go out in several requests."""
    top_n: int = Field(0, ge=0)
    """Most chunks kept after reranking; 0: the query's chunk_top_k alone decides."""
    cache_size: int = Field(4096, ge=0)
    """(query, chunk) scores kept in memory, least recently used dropped first; 0: no cache."""
    cache_ttl_s: float = Field(600.0, gt=0)
    degrade_top: int = Field(20, ge=1)
    """Under load only this many chunks (the best ranked before reranking) are reranked."""
    degrade_queue_depth: int = Field(8, ge=0)
    """Load means more than this many reranks already in flight in the process, ..."""
    degrade_deadline_s: float = Field(1.0, ge=0)
    """... or less than this many seconds left before the query's deadline."""

    @model_validator(mode="after")
    def _complete_when_enabled(self) -> RerankConfig:
        if self.overlap_tokens >= self.window_tokens:
            raise ValueError("rerank.overlap_tokens must be smaller than rerank.window_tokens")
        if self.provider != "none" and not (self.model and self.base_url):
            raise ValueError(
                f"rerank.model and rerank.base_url are required when rerank.provider is "
                f"{self.provider!r}"
            )
        return self
