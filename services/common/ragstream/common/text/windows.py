"""Token windows that never split a character: the chunker's last resort for a sentence
longer than its unit size, and its exact fit when joined units tokenize longer than their
sum (chunking.py)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import tiktoken


def token_windows(
    piece: str, ids: Sequence[int], enc: tiktoken.Encoding, size: int
) -> list[tuple[int, int, int]]:
    """(start, end, tokens) of consecutive windows of at most about `size` tokens of `piece`."""
    data = piece.encode("utf-8")
    parts = enc.decode_tokens_bytes(list(ids))
    ends = list(itertools.accumulate(len(part) for part in parts))
    windows: list[tuple[int, int, int]] = []
    first = byte_start = char_start = 0
    while first < len(parts):
        last = _window_end(parts, ends, data, first, size)
        char_end = char_start + len(data[byte_start : ends[last - 1]].decode("utf-8"))
        windows.append((char_start, char_end, last - first))
        first, byte_start, char_start = last, ends[last - 1], char_end
    return windows


def _window_end(
    parts: Sequence[bytes], ends: Sequence[int], data: bytes, first: int, size: int
) -> int:
    """Token index where the window starting at `first` ends.

    A window ends before a token that starts with whitespace if one is in its second half, so
    words stay whole. It never ends inside a character: a CJK character can span several
    tokens, so a window can exceed `size` when one character is longer than the window.
    """
    if len(parts) - first <= size:
        return len(parts)

    def between_characters(index: int) -> bool:
        return data[ends[index - 1]] & 0xC0 != 0x80  # not a UTF-8 continuation byte

    limit = first + size
    for index in range(limit, first + size // 2, -1):
        if parts[index][:1].isspace() and between_characters(index):
            return index
    for index in range(limit, first, -1):
        if between_characters(index):
            return index
    index = limit + 1
    while index < len(parts) and not between_characters(index):
        index += 1
    return index
