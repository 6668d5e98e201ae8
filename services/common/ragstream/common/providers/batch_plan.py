"""How the embedding scheduler packs provider calls: pure functions over token counts.

`token_bounds` gives each text of a request the count that the batch token limit needs
(an exact count only where a text could reach the limit), and `plan_batch` takes the texts
of the next call from the pending requests, in serving order (scheduler.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence


def plan_batch(pending: Iterable[Sequence[int]], max_texts: int, max_tokens: int) -> list[int]:
    """How many texts the next provider call takes from each pending request.

    `pending` holds, in serving order, the token counts of each request's texts not yet sent.
    Texts are taken strictly in that order: the first text that does not fit ends the batch
    (skipping ahead to a smaller text would let a later request overtake an earlier one), so
    the answer is one count per leading request, and only the last may be partial (or 0).
    A single text over `max_tokens` still goes out, alone, so that no request waits forever;
    the provider truncates or rejects it.
    """
    taken: list[int] = []
    texts = tokens = 0
    for counts in pending:
        take = 0
        for count in counts:
            if texts == max_texts or (texts > 0 and tokens + count > max_tokens):
                break
            texts += 1
            tokens += count
            take += 1
        taken.append(take)
        if take < len(counts) or texts == max_texts:
            break
    return taken


def counted_bytes(texts: Sequence[str], short: int) -> int:
    """The UTF-8 bytes of the texts that `token_bounds` counts exactly (those over `short`)."""
    sizes = (len(text.encode("utf-8")) for text in texts)
    return sum(size for size in sizes if size > short)


def token_bounds(texts: Sequence[str], count: Callable[[str], int], short: int) -> list[int]:
    """Each text's token count for the batch limit, counted only where it can matter.

    A token is at least one UTF-8 byte, so a text's byte length bounds its token count. A
    text of at most `short` bytes (the batch's token limit over its text limit) gets that
    bound: a batch of such texts cannot reach the token limit, so counting them exactly
    would change nothing but the cost. Longer texts are counted.
    """
    bounds: list[int] = []
    for text in texts:
        size = len(text.encode("utf-8"))
        bounds.append(size if size <= short else count(text))
    return bounds
