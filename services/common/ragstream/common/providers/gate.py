"""The embedders' language rule: a text outside the languages an embedder serves gets a
zero vector instead of one from the model.

A model's vector for a language it was not trained on is noise, and reciprocal rank fusion
gives a noisy ranking as much weight as BM25's: all-MiniLM-L6-v2, English only, takes
hybrid search on Chinese from BM25's nDCG@10 of 0.795 down to 0.474 (README, "Chinese").
A zero vector has no direction, so every store leaves it out of dense search, and a search
whose query vector is zero runs BM25 alone (`query/stages/retrieve.py`). Chunks, entities
and relations outside the languages are thus found by BM25 only, and a query outside them
is answered by BM25 only: never worse than BM25. The model is not run for those texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ragstream.common.providers.vectors import Matrix
from ragstream.common.text.language import served

if TYPE_CHECKING:
    from ragstream.common.providers.embedding import Embedder


class LanguageGate:
    """Wraps an embedder: texts its languages serve are embedded, the others give zero rows.

    `languages` replaces the embedder's own declaration (embedding.languages); the name then
    says so, since it decides which texts have vectors: an index built under other languages
    is then a recorded model mismatch, not silently mixed.
    """

    def __init__(self, inner: Embedder, languages: frozenset[str] | None = None) -> None:
        self.inner = inner
        self.languages = inner.languages if languages is None else languages
        own = self.languages == inner.languages
        self.name = inner.name if own else f"{inner.name}[{','.join(sorted(self.languages))}]"

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    async def embed(self, texts: Sequence[str]) -> Matrix:
        keep = [i for i, text in enumerate(texts) if served(text, self.languages)]
        if len(keep) == len(texts):
            return await self.inner.embed(texts)
        # A model whose size is learnt on its first call embeds one text to learn it.
        sent = keep or ([0] if self.inner.dimensions == 0 else [])
        rows = await self.inner.embed([texts[i] for i in sent]) if sent else None
        out = np.zeros((len(texts), self.inner.dimensions), dtype=np.float32)
        if rows is not None and keep:
            out[keep] = rows
        return out

    async def close(self) -> None:
        await self.inner.close()
