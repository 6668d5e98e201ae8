"""Chunking: the ceiling, the chunk count of fixed windows, overlap, preferred cut points, and
content-defined boundaries."""

from __future__ import annotations

import itertools
import math
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.text.chunking import TextPiece, chunk_text
from ragstream.common.text.tokens import count_tokens

_WORDS = (
    "river stone lantern harbor copper meadow signal orchard thunder ribbon glacier pepper "
    "canyon velvet marble falcon willow ember quartz tundra beacon saddle cobalt prairie "
    "anchor blossom cinder dune fjord garnet hollow island jasmine kelp lagoon mosaic"
)
WORDS = _WORDS.split()
_CHINESE_WORDS = "北京 学生 图书馆 学习 城市 河流 铁路 音乐 历史 科学 天气 市场"
CHINESE_WORDS = _CHINESE_WORDS.split()


def english_sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    sentences = []
    for index in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 14))]
        sentences.append(f"Sentence {index} says {' '.join(words)}.")
    return sentences


def chinese_sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    marks = "。！？；"
    sentences = []
    for index in range(count):
        first = "".join(rng.choice(CHINESE_WORDS) for _ in range(rng.randint(2, 3)))
        second = "".join(rng.choice(CHINESE_WORDS) for _ in range(rng.randint(2, 3)))
        sentences.append(f"第{index}句{first}，{second}{marks[index % 4]}")
    return sentences


def shared_edge(previous: str, following: str) -> str:
    """The longest end of `previous` that `following` starts with."""
    for size in range(min(len(previous), len(following)), 0, -1):
        if following.startswith(previous[-size:]):
            return previous[-size:]
    return ""


def assert_well_formed(pieces: list[TextPiece], cfg: ChunkingConfig) -> None:
    assert [piece.order for piece in pieces] == list(range(len(pieces)))
    for piece in pieces:
        assert piece.content == piece.content.strip() != ""
        assert piece.tokens == count_tokens(piece.content)
        assert piece.tokens <= cfg.ceiling


def test_empty_and_whitespace_give_no_chunks() -> None:
    assert chunk_text("", ChunkingConfig()) == []
    assert chunk_text(" \n\t\n ", ChunkingConfig()) == []


def test_short_text_is_one_stripped_chunk() -> None:
    pieces = chunk_text("\n  Hello world. Second sentence.  \n", ChunkingConfig())
    assert pieces == [TextPiece("Hello world. Second sentence.", 6, 0)]


def test_windows_respect_the_limit_and_cover_every_sentence() -> None:
    cfg = ChunkingConfig(chunk_tokens=120, overlap_tokens=20)
    sentences = english_sentences(300, seed=1)
    text = " ".join(sentences)
    pieces = chunk_text(text, cfg)
    assert_well_formed(pieces, cfg)
    assert len(pieces) > 20
    joined = "\n".join(piece.content for piece in pieces)
    assert all(sentence in joined for sentence in sentences)
    assert chunk_text(text, cfg) == pieces  # deterministic


def fixed_windows(text: str, cfg: ChunkingConfig) -> int:
    """How many chunks LightRAG's fixed windows make: one starting every
    `chunk_tokens - overlap_tokens` tokens."""
    return math.ceil(count_tokens(text) / (cfg.chunk_tokens - cfg.overlap_tokens))


@pytest.mark.parametrize("size", [(120, 20), (1200, 100)])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("shape", ["sentences", "paragraphs", "chinese"])
def test_chunks_are_about_as_many_as_fixed_windows(
    size: tuple[int, int], seed: int, shape: str
) -> None:
    cfg = ChunkingConfig(chunk_tokens=size[0], overlap_tokens=size[1])
    count = 300 if size[0] < 1000 else 3000
    sentences = english_sentences(count, seed)
    text = {
        "sentences": " ".join(sentences),
        "paragraphs": "\n\n".join(" ".join(sentences[i : i + 3]) for i in range(0, count, 3)),
        "chinese": "".join(chinese_sentences(count, seed)),
    }[shape]
    pieces = chunk_text(text, cfg)
    assert_well_formed(pieces, cfg)
    assert 0.8 <= len(pieces) / fixed_windows(text, cfg) <= 1.2
    assert max(piece.tokens for piece in pieces) > cfg.chunk_tokens  # the room is used


def test_max_chunk_tokens_is_a_hard_ceiling() -> None:
    cfg = ChunkingConfig(chunk_tokens=120, overlap_tokens=20, max_chunk_tokens=120)
    text = " ".join(english_sentences(300, seed=1))
    pieces = chunk_text(text, cfg)
    assert_well_formed(pieces, cfg)
    assert cfg.ceiling == 120
    assert len(pieces) > len(chunk_text(text, ChunkingConfig(chunk_tokens=120, overlap_tokens=20)))


def test_ceiling_below_the_window_is_refused() -> None:
    with pytest.raises(ValidationError, match="max_chunk_tokens must be at least chunk_tokens"):
        ChunkingConfig(chunk_tokens=1200, max_chunk_tokens=1000)


def test_text_within_the_ceiling_is_one_chunk() -> None:
    cfg = ChunkingConfig(chunk_tokens=120, overlap_tokens=20)
    text = " ".join(english_sentences(40, seed=3))
    text = text[: text.rindex(".", 0, len(text) * 9 // 10) + 1]
    while count_tokens(text) > cfg.ceiling:
        text = text[: text.rindex(".", 0, len(text) - 1) + 1]
    assert count_tokens(text) > cfg.chunk_tokens
    assert [piece.content for piece in chunk_text(text, cfg)] == [text]


def test_consecutive_chunks_overlap_by_whole_sentences() -> None:
    cfg = ChunkingConfig(chunk_tokens=120, overlap_tokens=40)
    pieces = chunk_text(" ".join(english_sentences(200, seed=2)), cfg)
    for previous, following in itertools.pairwise(pieces):
        overlap = shared_edge(previous.content, following.content)
        assert re.fullmatch(r"Sentence \d+ says [a-z ]+\.( Sentence \d+ says [a-z ]+\.)*", overlap)
        assert count_tokens(overlap) <= cfg.overlap_tokens


def test_no_overlap_when_overlap_is_zero() -> None:
    cfg = ChunkingConfig(chunk_tokens=120, overlap_tokens=0)
    sentences = english_sentences(200, seed=3)
    pieces = chunk_text(" ".join(sentences), cfg)
    assert sum(len(re.findall(r"Sentence \d+ ", piece.content)) for piece in pieces) == 200


def test_english_cuts_fall_after_sentence_ends() -> None:
    cfg = ChunkingConfig(chunk_tokens=100, overlap_tokens=40)
    pieces = chunk_text(" ".join(english_sentences(200, seed=4)), cfg)
    assert all(piece.content.startswith("Sentence ") for piece in pieces)
    assert all(piece.content.endswith(".") for piece in pieces)


def test_chinese_punctuation_marks_the_cuts() -> None:
    cfg = ChunkingConfig(chunk_tokens=100, overlap_tokens=40)
    pieces = chunk_text("".join(chinese_sentences(200, seed=5)), cfg)
    assert_well_formed(pieces, cfg)
    assert len(pieces) > 10
    for piece in pieces:
        assert piece.content.startswith("第")  # a sentence start, never after a comma
        assert piece.content[-1] in "。！？；"
        assert "\ufffd" not in piece.content


def test_overlap_shorter_than_a_sentence_starts_at_a_clause() -> None:
    cfg = ChunkingConfig(chunk_tokens=100, overlap_tokens=16)
    pieces = chunk_text("".join(chinese_sentences(200, seed=5)), cfg)
    assert_well_formed(pieces, cfg)
    for previous, following in itertools.pairwise(pieces):
        overlap = shared_edge(previous.content, following.content)
        at_clause = f"，{overlap}" in previous.content
        assert overlap == "" or overlap.startswith("第") or at_clause
        assert previous.content[-1] in "。！？；"


def test_paragraph_ends_are_preferred_over_sentence_ends() -> None:
    cfg = ChunkingConfig(chunk_tokens=200, overlap_tokens=0)
    sentences = english_sentences(240, seed=6)
    paragraphs = [" ".join(sentences[i : i + 3]) for i in range(0, len(sentences), 3)]
    text = "\n\n".join(paragraphs)
    pieces = chunk_text(text, cfg)
    assert len(pieces) > 5
    for piece in pieces[:-1]:
        end = text.index(piece.content) + len(piece.content)
        assert text[end : end + 2] == "\n\n"


def test_sentence_longer_than_the_window_is_cut_between_words() -> None:
    cfg = ChunkingConfig(chunk_tokens=64, overlap_tokens=0)
    rng = random.Random(7)
    words = [f"{rng.choice(WORDS)}{index}" for index in range(600)]
    text = " ".join(words)
    pieces = chunk_text(text, cfg)
    assert_well_formed(pieces, cfg)
    assert " ".join(piece.content for piece in pieces) == text
    assert min(piece.tokens for piece in pieces) >= 16


def test_unpunctuated_chinese_is_cut_between_characters() -> None:
    cfg = ChunkingConfig(chunk_tokens=50, overlap_tokens=5)
    text = "".join(CHINESE_WORDS) * 40
    pieces = chunk_text(text, cfg)
    assert_well_formed(pieces, cfg)
    assert all("\ufffd" not in piece.content for piece in pieces)
    assert "".join(piece.content for piece in pieces) == text


def test_split_by_character_chunks_each_part() -> None:
    cfg = ChunkingConfig(chunk_tokens=80, overlap_tokens=10, split_by_character="\n---\n")
    long_part = " ".join(english_sentences(60, seed=8))
    text = "\n---\n".join(["Tiny part.", long_part, "  ", "Another small part."])
    pieces = chunk_text(text, cfg)
    assert_well_formed(pieces, cfg)
    assert pieces[0].content == "Tiny part."
    assert pieces[-1].content == "Another small part."
    assert len(pieces) > 4
    assert all("---" not in piece.content for piece in pieces)


def test_split_by_character_only_keeps_long_parts_whole() -> None:
    cfg = ChunkingConfig(
        chunk_tokens=80, overlap_tokens=10, split_by_character="|", split_by_character_only=True
    )
    long_part = " ".join(english_sentences(40, seed=9))
    pieces = chunk_text(f" first |{long_part}| | last ", cfg)
    assert [piece.content for piece in pieces] == ["first", long_part, "last"]
    assert [piece.order for piece in pieces] == [0, 1, 2]
    assert pieces[1].tokens == count_tokens(long_part) > cfg.chunk_tokens


sentence_strategy = st.builds(
    lambda words, end: " ".join(words) + end,
    st.lists(st.sampled_from(WORDS + CHINESE_WORDS), min_size=3, max_size=16),
    st.sampled_from([". ", "! ", "? ", "。", "；", ".\n\n"]),
)


@settings(max_examples=25, deadline=None)
@given(
    sentences=st.lists(sentence_strategy, min_size=150, max_size=220, unique=True),
    edit=st.sampled_from(["insert", "replace", "delete"]),
    where=st.floats(min_value=0.4, max_value=0.6),
    new_sentence=sentence_strategy,
)
def test_local_edit_keeps_distant_chunks(
    sentences: list[str], edit: str, where: float, new_sentence: str
) -> None:
    cfg = ChunkingConfig(chunk_tokens=100, overlap_tokens=20)
    at = int(len(sentences) * where)
    edited = list(sentences)
    if edit == "insert":
        edited.insert(at, new_sentence)
    elif edit == "replace":
        edited[at] = new_sentence
    else:
        del edited[at]
    before = chunk_text("".join(sentences), cfg)
    after = chunk_text("".join(edited), cfg)
    assert after[0].content == before[0].content
    assert after[-1].content == before[-1].content
    kept = {piece.content for piece in before}
    assert sum(piece.content not in kept for piece in after) <= 6
