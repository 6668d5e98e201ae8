"""Slicing long texts to a reranker's window, and folding slice scores back per text.

Cross-encoder rerankers read a bounded number of tokens (typically 512 for query and document
together) and silently truncate the rest, so a long chunk would be judged by its opening alone.
Each text is cut into windows of `window` tokens that overlap by `overlap` tokens (so a
sentence cut at one border is whole in the next slice), every slice is scored, and the slice
scores of a text are aggregated:

- max (default): a chunk is as relevant as its best passage, the usual choice for passage
  retrieval (MaxP in Dai and Callan, "Deeper Text Understanding for IR with Contextual Neural
  Language Modeling", SIGIR 2019);
- mean: favours chunks that stay on topic throughout;
- first: the opening slice alone (FirstP in the same paper), for texts that lead with a summary.

Token counts use the same offline tiktoken encoding as chunking. The reranker's own tokenizer
differs, which is why the default window (480) leaves room below 512 for the query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ragstream.common.text.tokens import DEFAULT_ENCODING, encoding

Aggregation = Literal["max", "mean", "first"]


def slice_text(
    text: str, window: int, overlap: int, encoding_name: str = DEFAULT_ENCODING
) -> list[str]:
    """`text` cut into windows of at most `window` tokens, neighbours sharing `overlap`.

    A text that fits is returned unchanged as its only slice. Slices are cut on token
    boundaries and decoded from bytes, dropping a character split across a border rather than
    sending a replacement character (the overlap keeps it whole in the neighbouring slice).
    """
    if not 0 <= overlap < window:
        raise ValueError(f"overlap ({overlap}) must be at least 0 and below window ({window})")
    enc = encoding(encoding_name)
    tokens = enc.encode_ordinary(text)
    if len(tokens) <= window:
        return [text]
    step = window - overlap
    slices: list[str] = []
    for start in range(0, len(tokens), step):
        piece = enc.decode_bytes(tokens[start : start + window])
        slices.append(piece.decode("utf-8", errors="ignore"))
        if start + window >= len(tokens):
            break
    return slices


@dataclass(frozen=True, slots=True)
class SlicePlan:
    """Every text's slices, flattened in text order, so one request can carry them all."""

    slices: list[str]
    owners: list[int]
    """owners[i]: the index of the text that slices[i] was cut from."""


def plan_slices(
    texts: Sequence[str], window: int, overlap: int, encoding_name: str = DEFAULT_ENCODING
) -> SlicePlan:
    slices: list[str] = []
    owners: list[int] = []
    for index, text in enumerate(texts):
        pieces = slice_text(text, window, overlap, encoding_name)
        slices.extend(pieces)
        owners.extend([index] * len(pieces))
    return SlicePlan(slices, owners)


def aggregate(
    slice_scores: Sequence[float], owners: Sequence[int], count: int, how: Aggregation
) -> list[float]:
    """One score per text (`count` texts) from the scores of its slices, in slice order."""
    if len(slice_scores) != len(owners):
        raise ValueError(f"{len(slice_scores)} scores for {len(owners)} slices")
    per_text: list[list[float]] = [[] for _ in range(count)]
    for owner, score in zip(owners, slice_scores, strict=True):
        per_text[owner].append(score)
    if any(not scores for scores in per_text):
        raise ValueError("every text needs at least one slice score")
    if how == "max":
        return [max(scores) for scores in per_text]
    if how == "mean":
        return [sum(scores) / len(scores) for scores in per_text]
    return [scores[0] for scores in per_text]
