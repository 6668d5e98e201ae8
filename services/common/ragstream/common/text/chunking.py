"""Chunking with content-defined boundaries: a local edit changes only the chunks around it.

Chunk ids are hashes of chunk content, so re-indexing an edited document only processes the
chunks whose text changed. Greedy packing from the start of a document defeats that: one
inserted sentence shifts every later boundary and every later chunk gets a new id. Here a cut
depends only on the text near it, the idea behind content-defined chunking in backup and
sync tools, applied to sentences instead of bytes.

Each chunk costs an extraction call, so the chunker also aims at the chunk count of fixed
windows of `chunk_tokens` stepping by `chunk_tokens - overlap_tokens` (LightRAG's): chunks
carry about that many new tokens on average. Content-defined cuts cannot all fall at the
limit, so a chunk may grow past `chunk_tokens` up to the ceiling (`max_chunk_tokens`, by
default 4/3 x `chunk_tokens`). On the 100-document 2Wiki corpus of tests/bench/bench_scale
that gives 337 chunks where LightRAG's fixed 1,200/100 windows give 349 (held to 1,200
tokens, 449).

The rule, for a text longer than the ceiling (a shorter one is a single chunk):

1. Units. The text is split after sentence ends (". ! ?" before whitespace; the Chinese
   "。！？；" always) and at line and paragraph breaks (blank lines). A unit longer than
   `unit_max` tokens (the overlap size) is split after clause marks (", ; : ，、："), and a
   piece still too long by token windows. Every boundary has a level: paragraph > sentence >
   line > clause > token window.
2. Anchors. Each boundary scores (level, hash of the unit before it). A boundary is a cut when
   its score beats every other boundary less than `window` tokens before or after it (the
   start and end of the text count as unbeatable). This is local-maximum chunking: whether a
   boundary is a cut depends only on the text within `window` tokens of it, so cuts farther
   than that from an edit do not move. Because the level comes first, a paragraph end beats
   every sentence end near it, and a sentence end beats every line break. Two cuts are at
   least `window` tokens apart, and on random text about 2 x `window` apart on average.
   `window` is 0.7 x the average body (`chunk_tokens - overlap_tokens`, less a small slack).
3. Long segments. Local maxima are sometimes far apart. A segment longer than the ceiling's
   body (the ceiling less the overlap) is split at its best-scoring boundary that leaves both
   sides at least `window` tokens, recursively: still a function of that segment's text
   only, so an edit inside it changes only its parts.
4. Overlap. Each chunk after the first starts with the trailing whole units of the previous
   segment, up to `overlap_tokens`, from a sentence start where one fits: again only nearby
   text, so overlap never spreads an edit.

Exactly repeated text scores the same everywhere, and equal scores never make a cut: a run of
repeats longer than a chunk is split as one long segment (step 3), so an edit inside such a
run can change the chunks up to the run's ends. No content-defined rule can do better there,
since inside a run every position looks the same.

A text with pages (a form feed between them, as the PDF converter writes them) is split into
its pages first and each is chunked as below, so that no chunk spans two pages and a
citation can name the page. With `split_by_character`, the text (each page) is split on that
string and each part is chunked as above; with `split_by_character_only` too, each part is
one chunk whatever its length, as in LightRAG. All functions here are pure and deterministic.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import tiktoken

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.text.tokens import encoding
from ragstream.common.text.windows import token_windows

CHUNKER_VERSION = 3
"""Changes whenever the same text and settings would be cut differently (2: the average body
matches fixed windows, chunks up to the ceiling; 3: pages are chunked apart)."""
PAGE_BREAK = "\f"
"""How converters mark a page's end (ragstream/common/formats/structure.py)."""

WINDOW_SHARE = 0.7
"""`window` as a share of the average body, chosen for the fixed windows' chunk count."""

TOKEN, CLAUSE, LINE, SENTENCE, PARAGRAPH = range(5)
"""Boundary levels, weakest first."""

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_PARAGRAPH = re.compile(r"\n[^\S\n]*\n")
_LINE = re.compile(r"\n")
_CJK_SENTENCE = re.compile(r"[。！？；]+[”’」』）》\"')]*")
_LATIN_SENTENCE = re.compile(rf"[.!?]+[\"'”’)\]]*(?=\s|[{_HAN}])")
_CLAUSE = re.compile(r"[,;:](?=\s)|[，、：]")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_ABBREVIATION_LIST = "al approx cf dr e.g eq fig figs i.e jr mr mrs ms prof sr st vol vs"
_ABBREVIATIONS = frozenset(_ABBREVIATION_LIST.split())
"""Words whose period rarely ends a sentence ("et al.", "Fig."); single letters are initials."""


@dataclass(frozen=True, slots=True)
class TextPiece:
    """One chunk of a document."""

    content: str
    """The chunk's text, stripped of surrounding whitespace."""
    tokens: int
    """Tokens of `content` in the configured encoding."""
    order: int
    """Position of the chunk in its document, from 0."""


@dataclass(frozen=True, slots=True)
class _Unit:
    start: int
    end: int
    tokens: int
    level: int
    """Level of the boundary after this unit."""


def chunk_text(text: str, cfg: ChunkingConfig) -> list[TextPiece]:
    """Splits a document into chunks of at most `cfg.ceiling` tokens (see module doc)."""
    enc = encoding(cfg.encoding)
    parts = split_parts(text, cfg)
    pieces: list[tuple[str, int]] = []
    for part in parts:
        if cfg.split_by_character and cfg.split_by_character_only:
            content = part.strip()
            if content:
                pieces.append((content, len(enc.encode_ordinary(content))))
        else:
            pieces.extend(_chunk_part(part, cfg, enc))
    return [TextPiece(content, tokens, order) for order, (content, tokens) in enumerate(pieces)]


def split_parts(text: str, cfg: ChunkingConfig) -> list[str]:
    """The pieces chunked apart: the pages (split at page breaks, so that every chunk has
    one page and a citation can name it), each split by `split_by_character` when set."""
    pages = text.split(PAGE_BREAK)
    if not cfg.split_by_character:
        return pages
    return [part for page in pages for part in page.split(cfg.split_by_character)]


def _chunk_part(text: str, cfg: ChunkingConfig, enc: tiktoken.Encoding) -> list[tuple[str, int]]:
    content = text.strip()
    if not content:
        return []
    tokens = len(enc.encode_ordinary(content))
    ceiling = cfg.ceiling
    if tokens <= ceiling:
        return [(content, tokens)]
    # A chunk is stripped, and a first word without its leading space can take more tokens
    # (" tundra" is one token, "tundra" two): the slack keeps the chunk within the limit.
    slack = min(2 + cfg.chunk_tokens // 200, (cfg.chunk_tokens - cfg.overlap_tokens) // 4)
    body = cfg.chunk_tokens - cfg.overlap_tokens - slack
    longest = ceiling - cfg.overlap_tokens - slack
    unit_max = min(body, max(cfg.overlap_tokens, 16))
    window = max(1, int(body * WINDOW_SHARE))
    units = _units(text, enc, unit_max)
    scores = _scores(text, units)
    segments = []
    for start, end in _anchor_segments(units, scores, window):
        segments.extend(_split_long_segment(units, scores, start, end, longest, window))
    chunks: list[tuple[str, int]] = []
    previous: tuple[int, int] | None = None
    for start, end in segments:
        first = start if previous is None else _overlap_start(units, previous, cfg.overlap_tokens)
        chunks.extend(_fit(text[units[first].start : units[end - 1].end], ceiling, enc))
        previous = (start, end)
    return chunks


# --- 1. units ---------------------------------------------------------------------------------


def _units(text: str, enc: tiktoken.Encoding, unit_max: int) -> list[_Unit]:
    units: list[_Unit] = []
    for start, end, level in _spans(text, 0, len(text), _boundaries(text)):
        tokens = len(enc.encode_ordinary(text[start:end]))
        if tokens <= unit_max:
            units.append(_Unit(start, end, tokens, level))
        else:
            units.extend(_split_unit(text, start, end, level, enc, unit_max))
    return units


def _boundaries(text: str) -> dict[int, int]:
    """Offsets where a unit may end, with the strongest level seen at each offset."""
    found: dict[int, int] = {}

    def mark(offset: int, level: int) -> None:
        found[offset] = max(level, found.get(offset, TOKEN))

    for match in _LINE.finditer(text):
        mark(match.start(), LINE)
    for match in _CJK_SENTENCE.finditer(text):
        mark(match.end(), SENTENCE)
    for match in _LATIN_SENTENCE.finditer(text):
        if not _after_abbreviation(text, match):
            mark(match.end(), SENTENCE)
    for match in _PARAGRAPH.finditer(text):
        mark(match.start(), PARAGRAPH)
    return found


def _after_abbreviation(text: str, match: re.Match[str]) -> bool:
    if match.group() != ".":
        return False
    word = _WORD_BEFORE.search(text, max(0, match.start() - 12), match.start())
    if word is None:
        return False
    return len(word[1]) == 1 or "." in word[1] or word[1].lower() in _ABBREVIATIONS


def _spans(
    text: str, start: int, end: int, boundaries: dict[int, int]
) -> list[tuple[int, int, int]]:
    """(start, end, level after) of each unit in text[start:end].

    Whitespace between units opens the next unit, so a unit's token count matches its share
    of a chunk's count (the tokenizer attaches a leading space to the word after it). A
    whitespace-only span joins the next unit and lends its boundary level to the one before.
    """
    spans: list[tuple[int, int, int]] = []
    open_at = start
    for offset in sorted(o for o in boundaries if start < o < end):
        level = boundaries[offset]
        if text[open_at:offset].isspace():
            if spans:
                s, e, previous_level = spans[-1]
                spans[-1] = (s, e, max(previous_level, level))
            continue
        spans.append((open_at, offset, level))
        open_at = offset
    if text[open_at:end].strip():
        spans.append((open_at, end, PARAGRAPH))
    return spans


def _split_unit(
    text: str, start: int, end: int, level: int, enc: tiktoken.Encoding, unit_max: int
) -> list[_Unit]:
    """A long sentence: split after clause marks, then by token windows."""
    clauses = {start + m.end(): CLAUSE for m in _CLAUSE.finditer(text[start:end])}
    spans = _spans(text, start, end, clauses)
    units: list[_Unit] = []
    for index, (s, e, clause_level) in enumerate(spans):
        after = level if index == len(spans) - 1 else clause_level
        ids = enc.encode_ordinary(text[s:e])
        if len(ids) <= unit_max:
            units.append(_Unit(s, e, len(ids), after))
            continue
        windows = token_windows(text[s:e], ids, enc, unit_max)
        for w_index, (ws, we, count) in enumerate(windows):
            w_level = after if w_index == len(windows) - 1 else TOKEN
            units.append(_Unit(s + ws, s + we, count, w_level))
    return units


def _scores(text: str, units: Sequence[_Unit]) -> list[int]:
    """Score of the boundary after each unit: its level, then a hash of that unit's text.

    Only the unit before counts, so an edited unit changes the score of one boundary, not
    two: on the 450-passage document of tests/eval/test_chunk_counts.py, hashing both
    neighbours let 28 of the 450 one-paragraph edits re-cut three to five chunks, and this
    none more than two. A repeated unit ("Yes.") scores the same wherever it occurs, and
    ties suppress cuts, so the cut falls at another boundary near it.
    """
    scores = []
    for unit in units:
        digest = hashlib.blake2b(text[unit.start : unit.end].strip().encode(), digest_size=8)
        scores.append((unit.level << 64) | int.from_bytes(digest.digest(), "big"))
    return scores


# --- 2. anchors -------------------------------------------------------------------------------


def _anchor_segments(
    units: Sequence[_Unit], scores: Sequence[int], window: int
) -> list[tuple[int, int]]:
    """Unit ranges [start, end) between the local-maximum boundaries."""
    ends: list[int] = []
    total = 0
    for unit in units[:-1]:
        total += unit.tokens
        ends.append(total)
    grand_total = total + units[-1].tokens
    candidates = list(scores[:-1])
    before = _window_max(ends, candidates, window)
    after = _window_max([-e for e in reversed(ends)], candidates[::-1], window)[::-1]
    cuts = [
        index + 1
        for index, score in enumerate(candidates)
        if ends[index] >= window
        and grand_total - ends[index] >= window
        and score > before[index]
        and score >= after[index]
    ]
    edges = [0, *cuts, len(units)]
    return list(itertools.pairwise(edges))


def _window_max(positions: Sequence[int], scores: Sequence[int], window: int) -> list[int]:
    """For each item, the best score among earlier items less than `window` away (-1: none).

    A monotonic deque keeps this linear in the number of boundaries.
    """
    best: list[int] = []
    queue: deque[int] = deque()
    for index, position in enumerate(positions):
        while queue and position - positions[queue[0]] >= window:
            queue.popleft()
        best.append(scores[queue[0]] if queue else -1)
        while queue and scores[queue[-1]] <= scores[index]:
            queue.pop()
        queue.append(index)
    return best


# --- 3. long segments ---------------------------------------------------------------------------


def _split_long_segment(
    units: Sequence[_Unit], scores: Sequence[int], start: int, end: int, longest: int, window: int
) -> list[tuple[int, int]]:
    """Splits units[start:end] at its best boundaries until every part fits in `longest`
    tokens."""
    done: list[tuple[int, int]] = []
    pending = [(start, end)]
    while pending:
        first, last = pending.pop()
        sizes = [unit.tokens for unit in units[first:last]]
        total = sum(sizes)
        if total <= longest or last - first == 1:
            done.append((first, last))
            continue
        # Best score first; among equal scores (repeated text) the most even split, which
        # also keeps the number of rounds logarithmic.
        margin = min(window, total // 3)
        left = 0
        candidates: list[tuple[int, int, int]] = []
        fallback: list[tuple[int, int, int]] = []
        for index, size in enumerate(sizes[:-1], start=first):
            left += size
            key = (scores[index], -abs(2 * left - total), index)
            (candidates if margin <= left <= total - margin else fallback).append(key)
        cut = max(candidates or fallback)[2] + 1
        pending.extend([(cut, last), (first, cut)])
    return done


# --- 4. overlap and limits ----------------------------------------------------------------------


def _overlap_start(units: Sequence[_Unit], previous: tuple[int, int], overlap: int) -> int:
    """First unit of a chunk: the previous segment's trailing units within `overlap` tokens.

    Among the starts that fit, the one after the strongest boundary wins (a sentence start
    over a line or clause start), the earliest among equals, so that overlap reads as whole
    sentences where one fits, even when hard-wrapped lines make many short units.
    """
    first, end = previous
    start, used, best = end, 0, end
    while start - 1 > first and used + units[start - 1].tokens <= overlap:
        start -= 1
        used += units[start].tokens
        if best == end or units[start - 1].level >= units[best - 1].level:
            best = start
    return best


def _fit(raw: str, limit: int, enc: tiktoken.Encoding) -> list[tuple[str, int]]:
    """The chunk, or in the rare case that tokenizing the joined units gives more tokens than
    their sum and goes over `limit`, its token windows of even size."""
    content = raw.strip()
    ids = enc.encode_ordinary(content)
    if len(ids) <= limit:
        return [(content, len(ids))]
    parts = len(ids) // limit + 1
    windows = token_windows(content, ids, enc, -(-len(ids) // parts))
    pieces = (content[s:e].strip() for s, e, _ in windows)
    return [(piece, len(enc.encode_ordinary(piece))) for piece in pieces if piece]


def sentence_units(text: str, cfg: ChunkingConfig) -> list[tuple[int, int, int, int]]:
    """(start, end, tokens, level after) of the text's sentences, lines and paragraphs, in
    order (Chinese 。！？； always end one); a sentence longer than the chunk window is split
    after clause marks and then by token windows (levels CLAUSE and TOKEN)."""
    enc = encoding(cfg.encoding)
    body = max(16, cfg.chunk_tokens - cfg.overlap_tokens)
    return [(u.start, u.end, u.tokens, u.level) for u in _units(text, enc, body)]
