"""Entries cached per (collection, workspace) for one generation of the search store: the
rule the postings cache and the hit cache share.

The cache of a key holds the entries of one generation (the store's change counter, see
search.py): a read whose snapshot is at that generation uses it; a newer one empties it and
fills it anew; an older one passes it by (the cache may be ahead of its snapshot). This
instance's writes drop only the entries they change and move the cache to their
generation. Least recently used entries leave first, within a total size.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Generic, TypeVar

E = TypeVar("E", bound=Hashable)
V = TypeVar("V")


class GenerationalCache(Generic[E, V]):
    """Thread-safe; shared by the reader threads of one store. `size` measures an entry."""

    def __init__(self, max_size: int, size: Callable[[V], int]) -> None:
        self._max = max_size
        self._measure = size
        self._lock = threading.Lock()
        self._generations: dict[object, int] = {}
        self._entries: OrderedDict[tuple[object, E], V] = OrderedDict()
        self._size = 0

    def admit(self, key: object, generation: int) -> bool:
        """Whether a read at `generation` may use and fill the cache of `key` (a newer
        generation than the cache's empties it first)."""
        with self._lock:
            return self._admit(key, generation)

    def through(
        self,
        key: object,
        generation: int,
        entries: Sequence[E],
        load: Callable[[list[E]], Mapping[E, V]],
    ) -> dict[E, V]:
        """The values of `entries` (each once): from the cache where it holds them at
        `generation`, else from `load` (a read at `generation` of the entries missing),
        which fills the cache. An entry `load` leaves out is left out."""
        wanted = list(dict.fromkeys(entries))
        found: dict[E, V] = {}
        with self._lock:  # once for every entry: a query looks up dozens at a time
            usable = self._admit(key, generation)
            if usable:
                for entry in wanted:
                    value = self._hit(key, entry)
                    if value is not None:
                        found[entry] = value
        missing = [entry for entry in wanted if entry not in found]
        if missing:
            loaded = load(missing)
            if usable:
                self.put(key, generation, loaded)
            found.update(loaded)
        return found

    def get(self, key: object, generation: int, entry: E) -> V | None:
        with self._lock:
            if self._generations.get(key) != generation:
                return None
            return self._hit(key, entry)

    def put(self, key: object, generation: int, entries: Mapping[E, V]) -> None:
        """Keeps `entries` unless a write moved the cache on since the read at `generation`."""
        with self._lock:
            if self._generations.get(key) != generation:
                return
            for entry, value in entries.items():
                size = self._measure(value)
                if (key, entry) in self._entries or size > self._max:
                    continue
                self._entries[(key, entry)] = value
                self._size += size
            while self._size > self._max:
                self._evict(next(iter(self._entries)))

    def changed(self, key: object, generation: int, entries: Iterable[E]) -> None:
        """A write of this instance moved `key` to `generation`, changing `entries` only."""
        with self._lock:
            if self._generations.get(key) != generation - 1:
                self._drop(key)
                self._generations.pop(key, None)
                return
            for entry in entries:
                self._evict((key, entry))
            self._generations[key] = generation

    def forget(self, key: object) -> None:
        """Drops everything of `key` (a write that did not commit)."""
        with self._lock:
            self._drop(key)
            self._generations.pop(key, None)

    def _hit(self, key: object, entry: E) -> V | None:
        """The cached value, made the most recently used; the caller holds the lock."""
        found = self._entries.get((key, entry))
        if found is not None:
            self._entries.move_to_end((key, entry))
        return found

    def _admit(self, key: object, generation: int) -> bool:
        current = self._generations.get(key)
        if current is not None and current > generation:
            return False
        if current != generation:
            self._drop(key)
            self._generations[key] = generation
        return True

    def _evict(self, entry: tuple[object, E]) -> None:
        value = self._entries.pop(entry, None)
        if value is not None:
            self._size -= self._measure(value)

    def _drop(self, key: object) -> None:
        for entry in [entry for entry in self._entries if entry[0] == key]:
            self._evict(entry)
