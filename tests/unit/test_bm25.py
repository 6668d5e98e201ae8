"""BM25 with MaxScore pruning: the same top as scoring every record, with less read."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pytest

from ragstream.common.storage.sqlite import bm25


@dataclass
class MemorySource:
    """A PostingSource over in-memory records (pk -> terms), counting what it reads."""

    records: dict[int, list[str]]
    read: list[str] = field(default_factory=list)
    probed: int = 0

    def postings(self, term: str) -> bm25.Postings:
        self.read.append(term)
        pks = sorted(pk for pk, terms in self.records.items() if term in terms)
        return bm25.Postings(
            np.array(pks, dtype=np.int64),
            np.array([self.records[pk].count(term) for pk in pks], dtype=np.float64),
            np.array([len(self.records[pk]) for pk in pks], dtype=np.float64),
        )

    def frequencies(self, term: str, pks: bm25.IntArray) -> tuple[bm25.IntArray, bm25.FloatArray]:
        self.probed += len(pks)
        held = [int(pk) for pk in pks if term in self.records[int(pk)]]
        tf = [self.records[pk].count(term) for pk in held]
        return np.array(held, dtype=np.int64), np.array(tf, dtype=np.float64)

    def stats(self, terms: list[str]) -> list[bm25.TermStats]:
        found = []
        for term in dict.fromkeys(terms):
            holders = [t for t in self.records.values() if term in t]
            if holders:
                peak = max(t.count(term) for t in holders)
                found.append(bm25.TermStats(term, len(holders), peak, min(map(len, holders))))
        return found

    def corpus(self) -> bm25.Corpus:
        return bm25.Corpus(len(self.records), sum(map(len, self.records.values())))


def brute_force(source: MemorySource, terms: list[str]) -> dict[int, float]:
    """Every matching record's score, as FTS5's bm25() computes it."""
    corpus = source.corpus()
    avgdl = corpus.tokens / corpus.records
    df = Counter(t for terms_ in source.records.values() for t in set(terms_))
    scores: dict[int, float] = {}
    for pk, held in source.records.items():
        score = 0.0
        for term in dict.fromkeys(terms):
            tf = held.count(term)
            if tf:
                weight = bm25.idf(df[term], corpus)
                norm = bm25.K1 * (1 - bm25.B + bm25.B * len(held) / avgdl)
                score += weight * tf * (bm25.K1 + 1) / (tf + norm)
        if score:
            scores[pk] = score
    return scores


def zipf_records(count: int, seed: int) -> dict[int, list[str]]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 60, size=count)
    return {
        pk: [f"w{w}" for w in rng.zipf(1.3, size=int(n)) % 500]
        for pk, n in enumerate(lengths, start=1)
    }


@pytest.mark.parametrize("seed", range(4))
def test_maxscore_finds_the_exact_top_of_scoring_everything(seed: int) -> None:
    source = MemorySource(zipf_records(300, seed))
    rng = random.Random(seed)
    for _ in range(20):
        pk = rng.choice(list(source.records))
        terms = [*rng.sample(source.records[pk], min(4, len(source.records[pk]))), "absent"]
        limit = rng.choice([1, 5, 20])
        got = bm25.top(source.stats(terms), source.corpus(), source, limit)
        expected = brute_force(source, terms)
        cut = sorted(expected.values(), reverse=True)[:limit][-1]
        assert {pk for pk, _ in got} == {pk for pk, s in expected.items() if s >= cut * (1 - 1e-12)}
        for pk, score in got:
            assert score == pytest.approx(expected[pk], rel=1e-12)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)


def test_common_terms_are_looked_up_only_for_candidates_that_can_still_win() -> None:
    records = {pk: ["common", f"filler{pk}"] for pk in range(1, 1001)}
    records.update({pk: ["rare", "common"] for pk in range(1001, 1011)})
    source = MemorySource(records)
    got = bm25.top(source.stats(["common", "rare"]), source.corpus(), source, 5)
    assert {pk for pk, _ in got} == set(range(1001, 1011))  # ten tied at the cut, all there
    assert source.read == ["rare"]
    assert source.probed == 10


def test_ties_at_the_cut_are_all_returned() -> None:
    source = MemorySource({pk: ["shared"] for pk in range(1, 13)})
    got = bm25.top(source.stats(["shared"]), source.corpus(), source, 5)
    assert len(got) == 12
    assert len({score for _, score in got}) == 1


def test_nothing_to_score_gives_nothing() -> None:
    source = MemorySource({1: ["alpha"]})
    assert bm25.top(source.stats(["beta"]), source.corpus(), source, 5) == []
    assert bm25.top(source.stats(["alpha"]), source.corpus(), source, 0) == []
    assert bm25.top([], bm25.Corpus(0, 0), source, 5) == []


def test_idf_follows_fts5_and_keeps_common_terms_barely_positive() -> None:
    corpus = bm25.Corpus(records=100, tokens=1000)
    assert bm25.idf(1, corpus) == pytest.approx(math.log(99.5 / 1.5))
    assert bm25.idf(50, corpus) == bm25.MIN_IDF
    assert bm25.idf(100, corpus) == bm25.MIN_IDF
