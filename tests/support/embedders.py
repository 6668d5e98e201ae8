"""Embedders for tests that need to hold a stage at its embedding call."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ragstream.common.providers.embedding import Embedder
from ragstream.common.providers.vectors import Matrix


class HeldEmbedder:
    """An embedder whose calls wait for `release` (set) once they have been made."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name, self.dimensions, self.languages = inner.name, inner.dimensions, inner.languages
        self.called = asyncio.Event()
        self.release = asyncio.Event()

    async def embed(self, texts: Sequence[str]) -> Matrix:
        self.called.set()
        await self.release.wait()
        return await self._inner.embed(texts)

    async def close(self) -> None:
        await self._inner.close()
