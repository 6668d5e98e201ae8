"""The postings cache: reads at the cache's generation use it, writes drop what they change."""

from __future__ import annotations

import numpy as np

from ragstream.common.storage.sqlite import bm25
from ragstream.common.storage.sqlite.postings_cache import FULL_READ_RATIO, PostingsCache
from tests.unit.test_bm25 import MemorySource

KEY = ("chunks", "ws")
DF = {"a": 2, "b": 2, "c": 1}


def source() -> MemorySource:
    return MemorySource({1: ["a", "b"], 2: ["a"], 3: ["b", "b", "c"]})


def as_lists(postings: bm25.Postings) -> tuple[list[int], list[float], list[float]]:
    return postings.pks.tolist(), postings.tf.tolist(), postings.length.tolist()


def test_a_term_is_read_once_per_generation_and_equals_what_was_read() -> None:
    cache, sql = PostingsCache(), source()
    first = as_lists(cache.source(KEY, 1, sql, DF).postings("b"))
    again = as_lists(cache.source(KEY, 1, sql, DF).postings("b"))
    assert first == again == as_lists(source().postings("b"))
    assert sql.read == ["b"]


def test_a_write_of_this_instance_drops_only_the_terms_it_changes() -> None:
    cache, sql = PostingsCache(), source()
    for term in ("a", "b"):
        cache.source(KEY, 1, sql, DF).postings(term)
    cache.changed(KEY, 2, {"a"})
    for term in ("a", "b"):
        cache.source(KEY, 2, sql, DF).postings(term)
    assert sql.read == ["a", "b", "a"]


def test_a_newer_generation_from_elsewhere_empties_the_cache() -> None:
    cache, sql = PostingsCache(), source()
    cache.source(KEY, 1, sql, DF).postings("a")
    cache.changed(KEY, 5, {"b"})  # not the next generation: another writer came between
    cache.source(KEY, 5, sql, DF).postings("a")
    cache.source(KEY, 7, sql, DF).postings("a")
    assert sql.read == ["a", "a", "a"]


def test_an_older_snapshot_reads_past_the_cache_and_leaves_it_as_it_is() -> None:
    cache, sql = PostingsCache(), source()
    cache.source(KEY, 3, sql, DF).postings("a")
    old = cache.source(KEY, 2, sql, DF)
    old.postings("a")
    old.postings("a")
    cache.source(KEY, 3, sql, DF).postings("a")
    assert sql.read == ["a", "a", "a"]


def test_a_write_that_did_not_commit_forgets_the_key() -> None:
    cache, sql = PostingsCache(), source()
    cache.source(KEY, 1, sql, DF).postings("a")
    cache.changed(KEY, 2, {"b"})
    cache.forget(KEY)
    cache.source(KEY, 1, sql, DF).postings("a")
    assert sql.read == ["a", "a"]


def test_the_least_recently_used_terms_leave_first_within_the_limit() -> None:
    cache, sql = PostingsCache(max_postings=3), source()
    for term in ("a", "c", "a", "b"):  # a: 2 postings, c: 1, b: 2
        cache.source(KEY, 1, sql, DF).postings(term)
    for term in ("a", "b"):
        cache.source(KEY, 1, sql, DF).postings(term)
    assert sql.read == ["a", "c", "b", "a", "b"]


def test_frequencies_agree_with_the_source_cached_or_not() -> None:
    cache, sql = PostingsCache(), source()
    pks = np.array([1, 3], dtype=np.int64)
    expected = [x.tolist() for x in source().frequencies("b", pks)]
    common = {"b": FULL_READ_RATIO * len(pks) + 1}  # too many postings per candidate
    looked_up = [x.tolist() for x in cache.source(KEY, 1, sql, common).frequencies("b", pks)]
    assert sql.read == [] and sql.probed == len(pks)
    read_in_full = [x.tolist() for x in cache.source(KEY, 1, sql, DF).frequencies("b", pks)]
    assert sql.read == ["b"]
    cached = [x.tolist() for x in cache.source(KEY, 1, sql, common).frequencies("b", pks)]
    assert sql.read == ["b"] and sql.probed == len(pks)
    assert looked_up == read_in_full == cached == expected
