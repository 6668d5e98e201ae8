"""The hit record cache: reads at the cache's generation use it, writes drop what they change,
an older snapshot never fills it, and its size stays within its bound."""

from __future__ import annotations

from ragstream.common.models import NO_VECTOR, SearchRecord
from ragstream.common.storage.sqlite.hit_cache import HitCache

KEY = ("chunks", "ws")


class Rows:
    """Stored records by pk, at one version; records every pk read."""

    def __init__(self, version: str = "v1") -> None:
        self.version = version
        self.read: list[int] = []

    def load(self, pks: list[int]) -> dict[int, SearchRecord]:
        self.read += pks
        return {pk: record(pk, self.version) for pk in pks if pk < 100}


def record(pk: int, version: str, text: str = "") -> SearchRecord:
    return SearchRecord(
        id=f"r{pk}", workspace="ws", text=text or f"{version} {pk}", terms=(),
        vector=NO_VECTOR, doc_ids=("d",),
    )  # fmt: skip


def texts(found: dict[int, SearchRecord]) -> dict[int, str]:
    return {pk: r.text for pk, r in sorted(found.items())}


def test_records_are_read_once_per_generation_and_equal_what_was_read() -> None:
    cache, rows = HitCache(), Rows()
    first = cache.records(KEY, 1, [1, 2], rows.load)
    again = cache.records(KEY, 1, [2, 1, 3], rows.load)
    assert texts(first) == {1: "v1 1", 2: "v1 2"}
    assert texts(again) == {1: "v1 1", 2: "v1 2", 3: "v1 3"}
    assert rows.read == [1, 2, 3]


def test_a_missing_record_is_not_cached_as_missing() -> None:
    cache, rows = HitCache(), Rows()
    assert cache.records(KEY, 1, [100], rows.load) == {}
    assert cache.records(KEY, 1, [100], rows.load) == {}
    assert rows.read == [100, 100]


def test_a_write_of_this_instance_drops_only_the_records_it_changes() -> None:
    cache, rows = HitCache(), Rows()
    cache.records(KEY, 1, [1, 2], rows.load)
    cache.changed(KEY, 2, [1])
    rows.version = "v2"
    assert texts(cache.records(KEY, 2, [1, 2], rows.load)) == {1: "v2 1", 2: "v1 2"}
    assert rows.read == [1, 2, 1]


def test_a_newer_generation_from_elsewhere_empties_the_cache() -> None:
    cache, rows = HitCache(), Rows()
    cache.records(KEY, 1, [1], rows.load)
    cache.changed(KEY, 5, [2])  # not the next generation: another writer came between
    rows.version = "v5"
    assert texts(cache.records(KEY, 5, [1], rows.load)) == {1: "v5 1"}
    assert texts(cache.records(KEY, 7, [1], rows.load)) == {1: "v5 1"}
    assert rows.read == [1, 1, 1]


def test_an_older_snapshot_neither_uses_nor_fills_the_cache() -> None:
    cache, new = HitCache(), Rows("v3")
    cache.records(KEY, 3, [1], new.load)
    old = Rows("v2")
    assert texts(cache.records(KEY, 2, [1, 2], old.load)) == {1: "v2 1", 2: "v2 2"}
    assert texts(cache.records(KEY, 3, [1, 2], new.load)) == {1: "v3 1", 2: "v3 2"}
    assert old.read == [1, 2]
    assert new.read == [1, 2]


def test_a_read_overtaken_by_a_write_does_not_fill_the_cache() -> None:
    cache, rows = HitCache(), Rows()
    cache.records(KEY, 1, [], rows.load)

    def load_while_written(pks: list[int]) -> dict[int, SearchRecord]:
        cache.changed(KEY, 2, [1])  # this instance wrote while the read ran
        return rows.load(pks)

    cache.records(KEY, 1, [1], load_while_written)
    rows.version = "v2"
    assert texts(cache.records(KEY, 2, [1], rows.load)) == {1: "v2 1"}


def test_a_write_that_did_not_commit_forgets_the_key() -> None:
    cache, rows = HitCache(), Rows()
    cache.records(KEY, 1, [1], rows.load)
    cache.changed(KEY, 2, [2])
    cache.forget(KEY)
    cache.records(KEY, 1, [1], rows.load)
    assert rows.read == [1, 1]


def test_the_least_recently_used_records_leave_first_within_the_size() -> None:
    cache = HitCache(max_text_chars=30)

    def load(pks: list[int]) -> dict[int, SearchRecord]:
        return {pk: record(pk, "", text="x" * 10) for pk in pks}

    cache.records(KEY, 1, [1, 2, 3], load)
    cache.records(KEY, 1, [1], load)  # 1 is now the most recent
    read: list[int] = []

    def counted(pks: list[int]) -> dict[int, SearchRecord]:
        read.extend(pks)
        return load(pks)

    cache.records(KEY, 1, [4], counted)  # 2 leaves
    cache.records(KEY, 1, [1, 3, 4, 2], counted)
    assert read == [4, 2]
