"""Semantic chunking: cuts where neighbouring sentences drift apart, never inside a sentence,
short pieces joined, the chunk ceiling as the maximum, and edits that stay local."""

from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.providers.embedding import HashEmbedder
from ragstream.common.text.chunking import LINE, SENTENCE, TOKEN, TextPiece, sentence_units
from ragstream.common.text.semantic import semantic_chunks, semantic_pieces
from ragstream.common.text.tokens import count_tokens

CFG = ChunkingConfig(
    chunk_tokens=120,
    overlap_tokens=10,
    strategy="semantic",
    semantic_threshold=0.3,
    semantic_min_sentences=2,
)
TOPICS = {
    "salmon": "salmon pens fjord farm salmon feed salmon nets",
    "rocket": "rocket launch orbit rocket engine fuel rocket stage",
    "violin": "violin bow strings violin concert music violin tune",
    "glacier": "glacier ice melt glacier valley snow glacier flow",
}


def topical(topic: str, n: int) -> list[str]:
    words = TOPICS[topic].split()
    return [f"The {' '.join(words[i % 3 : i % 3 + 5])} today number {i}." for i in range(n)]


def chunks(text: str, cfg: ChunkingConfig = CFG) -> list[TextPiece]:
    return asyncio.run(semantic_chunks(text, cfg, HashEmbedder(256)))


def unit(level: int) -> tuple[int, int, int, int]:
    return (0, 1, 5, level)


def test_cuts_fall_only_after_sentences_whose_neighbours_differ() -> None:
    units = [unit(SENTENCE), unit(TOKEN), unit(SENTENCE), unit(SENTENCE), unit(SENTENCE)]
    similarities = [0.9, 0.1, 0.2, 0.9]  # the drop after unit 1 is inside a sentence
    assert semantic_pieces(units, similarities, threshold=0.5, min_sentences=1) == [
        (0, 3),
        (3, 5),
    ]


def test_short_pieces_join_the_next_and_the_last_joins_the_one_before() -> None:
    units = [unit(SENTENCE)] * 6
    similarities = [0.0, 0.9, 0.9, 0.9, 0.0]
    assert semantic_pieces(units, similarities, 0.5, min_sentences=2) == [(0, 6)]
    assert semantic_pieces(units, [0.9, 0.0, 0.9, 0.9, 0.0], 0.5, 2) == [(0, 2), (2, 6)]


def test_a_change_of_topic_is_a_cut_and_a_topic_stays_together() -> None:
    text = " ".join(topical("salmon", 4) + topical("rocket", 4))
    pieces = chunks(text)
    assert [p.content for p in pieces] == [
        " ".join(topical("salmon", 4)),
        " ".join(topical("rocket", 4)),
    ]


def test_chinese_sentence_punctuation_always_ends_a_sentence() -> None:
    text = "鲑鱼在峡湾养殖。火箭发射成功！小提琴演奏会？冰川正在融化。"
    units = sentence_units(text, CFG)
    ends = [text[start:end][-1] for start, end, _, level in units if level >= LINE]
    assert ends == ["。", "！", "？", "。"]


def test_the_chunk_ceiling_stays_the_maximum() -> None:
    long_topic = " ".join(topical("glacier", 60))
    pieces = chunks(long_topic)
    assert len(pieces) > 1
    assert all(p.tokens <= CFG.ceiling for p in pieces)
    assert all(p.tokens == count_tokens(p.content) for p in pieces)


paragraph = st.builds(
    lambda topic, n: " ".join(topical(topic, n)),
    st.sampled_from(sorted(TOPICS)),
    st.integers(min_value=2, max_value=5),
)


@settings(max_examples=20)
@given(
    paragraphs=st.lists(paragraph, min_size=12, max_size=20),
    where=st.floats(min_value=0.3, max_value=0.7),
    new_sentence=st.sampled_from(["An unrelated remark about taxes.", "The salmon feed arrived."]),
)
def test_an_edit_recuts_only_its_neighbourhood(
    paragraphs: list[str], where: float, new_sentence: str
) -> None:
    # Numbered, so no two paragraphs repeat each other (inside a run of repeats no cut is
    # content-defined, as chunking.py explains).
    paragraphs = [f"Report {i} follows. {p}" for i, p in enumerate(paragraphs)]
    at = int(len(paragraphs) * where)
    edited = list(paragraphs)
    edited[at] = f"{edited[at]} {new_sentence}"
    before = chunks("\n\n".join(paragraphs))
    after = chunks("\n\n".join(edited))
    kept = {piece.content for piece in before}
    # The edited piece and its neighbours at most; a long run of one topic is cut by the
    # token chunker, whose own edits stay within a few windows.
    assert sum(piece.content not in kept for piece in after) <= 4
    assert after[0].content == before[0].content
    assert after[-1].content == before[-1].content
