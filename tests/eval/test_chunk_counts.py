"""The chunker costs no more extraction calls than LightRAG's fixed windows on real documents,
and an edit of one paragraph still re-cuts at most two chunks."""

import json
import math
import os
from pathlib import Path

import pytest

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.text.chunking import chunk_text
from ragstream.common.text.tokens import count_tokens

DATA = Path(os.environ.get("RAGSTREAM_TEST_DATA", Path(__file__).parents[3] / "shared" / "data"))
DOCS, PASSAGES = 100, 30
"""The corpus of tests/bench/bench_scale: 100 documents of 30 consecutive 2Wiki passages."""


def wiki_passages(count: int) -> list[str]:
    corpus = DATA / "multihop" / "2wikimultihopqa_hipporag" / "corpus.jsonl"
    if not corpus.is_file():
        pytest.fail(f"evaluation data not found at {corpus} (set RAGSTREAM_TEST_DATA)")
    with corpus.open(encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(count), lines, strict=False)]
    return [f"{row['title']}. {row['text']}" for row in rows]


def test_2wiki_documents_take_no_more_chunks_than_fixed_windows() -> None:
    cfg = ChunkingConfig()
    texts = wiki_passages(DOCS * PASSAGES)
    documents = ["\n\n".join(texts[i : i + PASSAGES]) for i in range(0, len(texts), PASSAGES)]
    step = cfg.chunk_tokens - cfg.overlap_tokens
    fixed = sum(math.ceil(count_tokens(document) / step) for document in documents)
    chunks = [piece for document in documents for piece in chunk_text(document, cfg)]
    assert len(chunks) <= 1.05 * fixed
    assert max(piece.tokens for piece in chunks) <= cfg.ceiling


def test_one_edited_paragraph_recuts_at_most_two_chunks() -> None:
    cfg = ChunkingConfig()
    paragraphs = wiki_passages(DOCS * PASSAGES + 450)[-450:]
    before = {piece.content for piece in chunk_text("\n\n".join(paragraphs), cfg)}
    for at in range(0, len(paragraphs), 3):  # all 450 hold too; a third keeps it quick
        edited = list(paragraphs)
        edited[at] = edited[at].replace(" ", " also ", 1)
        after = chunk_text("\n\n".join(edited), cfg)
        assert 1 <= sum(piece.content not in before for piece in after) <= 2
