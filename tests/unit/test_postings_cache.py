"""The postings cache: reads at the cache's generation use it, writes drop what they change."""

from __future__ import annotations

import numpy as np

from ragstream.common.storage.sqlite import bm25
from ragstream.common.storage.sqlite.postings_cache import FULL_READ_AT, PostingsCache
from tests.unit.test_bm25 import MemorySource

KEY = ("chunks", "ws")


def source() -> MemorySource:
    return MemorySource({1: ["a", "b"], 2: ["a"], 3: ["b", "b", "c"]})


def as_lists(postings: bm25.Postings) -> tuple[list[int], list[float], list[float]]:
    return postings.pks.tolist(), postings.tf.tolist(), postings.length.tolist()


def test_a_term_is_read_once_per_generation_and_equals_what_was_read() -> None:
    cache, sql = PostingsCache(), source()
    first = as_lists(cache.source(KEY, 1, sql).postings("b"))
    again = as_lists(cache.source(KEY, 1, sql).postings("b"))
    assert first == again == as_lists(source().postings("b"))
    assert sql.read == ["b"]


def test_a_write_of_this_instance_drops_only_the_terms_it_changes() -> None:
    cache, sql = PostingsCache(), source()
    for term in ("a", "b"):
        cache.source(KEY, 1, sql).postings(term)
    cache.changed(KEY, 2, {"a"})
    for term in ("a", "b"):
        cache.source(KEY, 2, sql).postings(term)
    assert sql.read == ["a", "b", "a"]


def test_a_newer_generation_from_elsewhere_empties_the_cache() -> None:
    cache, sql = PostingsCache(), source()
    cache.source(KEY, 1, sql).postings("a")
    cache.changed(KEY, 5, {"b"})  # not the next generation: another writer came between
    cache.source(KEY, 5, sql).postings("a")
    cache.source(KEY, 7, sql).postings("a")
    assert sql.read == ["a", "a", "a"]


def test_an_older_snapshot_reads_past_the_cache_and_leaves_it_as_it_is() -> None:
    cache, sql = PostingsCache(), source()
    cache.source(KEY, 3, sql).postings("a")
    old = cache.source(KEY, 2, sql)
    old.postings("a")
    old.postings("a")
    cache.source(KEY, 3, sql).postings("a")
    assert sql.read == ["a", "a", "a"]


def test_a_write_that_did_not_commit_forgets_the_key() -> None:
    cache, sql = PostingsCache(), source()
    cache.source(KEY, 1, sql).postings("a")
    cache.changed(KEY, 2, {"b"})
    cache.forget(KEY)
    cache.source(KEY, 1, sql).postings("a")
    assert sql.read == ["a", "a"]


def test_the_least_recently_used_terms_leave_first_within_the_limit() -> None:
    cache, sql = PostingsCache(max_postings=3), source()
    for term in ("a", "c", "a", "b"):  # a: 2 postings, c: 1, b: 2
        cache.source(KEY, 1, sql).postings(term)
    for term in ("a", "b"):
        cache.source(KEY, 1, sql).postings(term)
    assert sql.read == ["a", "c", "b", "a", "b"]


def test_frequencies_agree_with_the_source_cached_or_not() -> None:
    cache, sql = PostingsCache(), source()
    pks = np.array([1, 2, 3], dtype=np.int64)
    expected = [x.tolist() for x in source().frequencies("b", pks)]
    uncached = [x.tolist() for x in cache.source(KEY, 1, sql).frequencies("b", pks)]
    assert sql.read == []  # few candidates: looked up, not read in full
    cache.source(KEY, 1, sql).postings("b")
    cached = [x.tolist() for x in cache.source(KEY, 1, sql).frequencies("b", pks)]
    assert uncached == cached == expected
    many = np.arange(1, FULL_READ_AT + 1, dtype=np.int64)
    big = MemorySource({pk: ["z"] * (pk % 3) for pk in range(1, FULL_READ_AT + 1)})
    held, tf = cache.source(KEY, 1, big).frequencies("z", many)
    assert big.read == ["z"]
    assert held.tolist() == [pk for pk in range(1, FULL_READ_AT + 1) if pk % 3]
    assert tf.tolist() == [float(pk % 3) for pk in held.tolist()]
