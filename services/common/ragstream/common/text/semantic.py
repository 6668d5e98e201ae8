"""Semantic chunking: cut where the meaning of neighbouring sentences drifts apart.

The text is split into sentences (Chinese 。！？； always end one; see chunking.py), each
sentence is embedded, and a cut falls between two sentences whose cosine similarity is below
`semantic_threshold` (the "semantic chunking" of the advanced-RAG literature, e.g. Greg
Kamradt's "5 levels of text splitting"). Then:

1. a piece of fewer than `semantic_min_sentences` sentences joins the piece after it (the
   last one joins the piece before), so no chunk is a lone sentence;
2. a piece longer than the chunk ceiling (`max_chunk_tokens`, by default 4/3 x
   `chunk_tokens`) is cut by the token chunker (chunking.py), the ceiling staying the
   maximum.

Edit locality: whether a cut falls between two sentences depends on those two sentences
only, and a short piece joins only its neighbour, so an edit re-cuts only the pieces around
it; every other chunk keeps its text and its id. Semantic chunks carry no overlap: their
ends are where the topic changes. The similarity rule is pure (`semantic_pieces`); the
embeddings come from the configured embedder at indexing priority (`semantic_chunks`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.providers.embedding import Embedder
from ragstream.common.text.chunking import (
    LINE,
    TextPiece,
    chunk_text,
    sentence_units,
    split_parts,
)
from ragstream.common.text.tokens import count_tokens

Unit = tuple[int, int, int, int]
"""(start, end, tokens, level after), as chunking.sentence_units gives them."""


def adjacent_similarities(vectors: np.ndarray) -> list[float]:
    """Cosine similarity of each vector with the next (rows need not be normalized)."""
    if len(vectors) < 2:
        return []
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    return [float(x) for x in np.einsum("ij,ij->i", unit[:-1], unit[1:])]


def semantic_pieces(
    units: Sequence[Unit], similarities: Sequence[float], threshold: float, min_sentences: int
) -> list[tuple[int, int]]:
    """[start, end) unit ranges: cut after each sentence end whose similarity to the next
    sentence is below `threshold` (never inside a sentence), then short pieces joined."""
    if not units:
        return []
    cuts = [
        i + 1
        for i, similarity in enumerate(similarities)
        if units[i][3] >= LINE and similarity < threshold
    ]
    bounds = [0, *cuts, len(units)]
    pieces = list(itertools.pairwise(bounds))
    return _join_short(units, pieces, min_sentences)


def _join_short(
    units: Sequence[Unit], pieces: list[tuple[int, int]], min_sentences: int
) -> list[tuple[int, int]]:
    def sentences(piece: tuple[int, int]) -> int:
        return sum(1 for unit in units[piece[0] : piece[1]] if unit[3] >= LINE)

    joined: list[tuple[int, int]] = []
    pending: int | None = None
    for start, end in pieces:
        begin = start if pending is None else pending
        if sentences((begin, end)) < min_sentences:
            pending = begin
            continue
        joined.append((begin, end))
        pending = None
    if pending is not None:
        if joined:
            joined[-1] = (joined[-1][0], len(units))
        else:
            joined.append((pending, len(units)))
    return joined


async def semantic_chunks(text: str, cfg: ChunkingConfig, embedder: Embedder) -> list[TextPiece]:
    """The text's chunks by semantic cuts (module doc); one embedding request per text."""
    parts = split_parts(text, cfg)
    contents: list[str] = []
    for part in parts:
        contents.extend(await _part_chunks(part, cfg, embedder))
    return [
        TextPiece(content, count_tokens(content, cfg.encoding), order)
        for order, content in enumerate(contents)
    ]


async def _part_chunks(text: str, cfg: ChunkingConfig, embedder: Embedder) -> list[str]:
    units = sentence_units(text, cfg)
    if not units:
        return []
    sentences = [text[start:end].strip() or "." for start, end, _, _ in units]
    vectors = np.asarray(await embedder.embed(sentences), dtype=np.float32)
    ranges = semantic_pieces(
        units, adjacent_similarities(vectors), cfg.semantic_threshold, cfg.semantic_min_sentences
    )
    tokens_cfg = cfg.model_copy(update={"split_by_character": None})
    contents: list[str] = []
    for first, last in ranges:
        piece = text[units[first][0] : units[last - 1][1]].strip()
        if count_tokens(piece, cfg.encoding) <= cfg.ceiling:
            contents.append(piece)
        else:  # longer than the ceiling: the token chunker cuts it, content-defined as ever
            contents.extend(p.content for p in chunk_text(piece, tokens_cfg))
    return [c for c in contents if c]
