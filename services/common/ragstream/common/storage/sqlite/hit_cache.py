"""Decoded hit records of the searches lately answered, per (collection, workspace).

A search's last step reads its hits' rows (text, document ids, metadata, attributes) and
decodes their JSON: about a third of the database time of a mix query, spent again on the
same popular chunks and entities by the next query. The cache keeps them decoded, least
recently used first out, within a total size of text.

Like the postings cache (postings_cache.py), the cache of a (collection, workspace) holds
the records of one generation (the store's change counter): a read whose snapshot is at that
generation uses it; a newer one empties it and fills it anew; an older one passes it by.
This instance's writes drop only the records they change and move the cache to their
generation.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping

from ragstream.common.models import SearchRecord

MAX_TEXT_CHARS = 32_000_000
"""Characters of record text kept per store in all (with the rest of a record, about
100 MB at most)."""

Load = Callable[[list[int]], dict[int, SearchRecord]]
"""Reads the records of pks from the snapshot of the search."""


class HitCache:
    """Thread-safe; shared by the reader threads of one store."""

    def __init__(self, max_text_chars: int = MAX_TEXT_CHARS) -> None:
        self._max = max_text_chars
        self._lock = threading.Lock()
        self._generations: dict[object, int] = {}
        self._records: OrderedDict[tuple[object, int], SearchRecord] = OrderedDict()
        self._size = 0

    def records(
        self, key: object, generation: int, pks: Iterable[int], load: Load
    ) -> dict[int, SearchRecord]:
        """The records of `pks` that exist, from the cache where it holds them and from
        `load` (a read at `generation`) for the rest."""
        wanted = list(dict.fromkeys(pks))
        with self._lock:
            usable = self._usable(key, generation)
            found = {pk: r for pk in wanted if usable and (r := self._get((key, pk))) is not None}
        missing = [pk for pk in wanted if pk not in found]
        if not missing:
            return found
        loaded = load(missing)
        if usable:
            self._put(key, generation, loaded)
        return {**found, **loaded}

    def changed(self, key: object, generation: int, pks: Iterable[int]) -> None:
        """A write of this instance moved `key` to `generation`, changing `pks` only."""
        with self._lock:
            if self._generations.get(key) != generation - 1:
                self._drop(key)
                self._generations.pop(key, None)
                return
            for pk in pks:
                self._evict((key, pk))
            self._generations[key] = generation

    def forget(self, key: object) -> None:
        """Drops everything of `key` (a write that did not commit)."""
        with self._lock:
            self._drop(key)
            self._generations.pop(key, None)

    def _usable(self, key: object, generation: int) -> bool:
        current = self._generations.get(key)
        if current is not None and current > generation:
            return False  # an older snapshot than the cache: the cache may be ahead of it
        if current != generation:
            self._drop(key)
            self._generations[key] = generation
        return True

    def _get(self, entry: tuple[object, int]) -> SearchRecord | None:
        found = self._records.get(entry)
        if found is not None:
            self._records.move_to_end(entry)
        return found

    def _put(self, key: object, generation: int, loaded: Mapping[int, SearchRecord]) -> None:
        with self._lock:
            if self._generations.get(key) != generation:
                return  # a write moved the cache on meanwhile
            for pk, record in loaded.items():
                if (key, pk) in self._records or len(record.text) > self._max:
                    continue
                self._records[(key, pk)] = record
                self._size += len(record.text)
            while self._size > self._max:
                self._evict(next(iter(self._records)))

    def _evict(self, entry: tuple[object, int]) -> None:
        record = self._records.pop(entry, None)
        if record is not None:
            self._size -= len(record.text)

    def _drop(self, key: object) -> None:
        for entry in [entry for entry in self._records if entry[0] == key]:
            self._evict(entry)
