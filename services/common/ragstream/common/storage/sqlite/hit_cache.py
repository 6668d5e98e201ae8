"""Decoded hit records of the searches lately answered, per (collection, workspace).

A search's last step reads its hits' rows (text, document ids, metadata, attributes) and
decodes their JSON: about a third of the database time of a mix query, spent again on the
same popular chunks and entities by the next query. The cache keeps them decoded, per
generation of the store (`generations.GenerationalCache`), within a total size of text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ragstream.common.models import SearchRecord
from ragstream.common.storage.sqlite.generations import GenerationalCache

MAX_TEXT_CHARS = 32_000_000
"""Characters of record text kept per store in all (with the rest of a record, about
100 MB at most)."""

Load = Callable[[list[int]], dict[int, SearchRecord]]
"""Reads the records of pks from the snapshot of the search."""


class HitCache:
    """Thread-safe; shared by the reader threads of one store."""

    def __init__(self, max_text_chars: int = MAX_TEXT_CHARS) -> None:
        self._cache: GenerationalCache[int, SearchRecord] = GenerationalCache(
            max_text_chars, lambda record: len(record.text)
        )

    def records(
        self, key: object, generation: int, pks: Iterable[int], load: Load
    ) -> dict[int, SearchRecord]:
        """The records of `pks` that exist, from the cache where it holds them and from
        `load` (a read at `generation`) for the rest."""
        return self._cache.through(key, generation, list(pks), load)

    def changed(self, key: object, generation: int, pks: Iterable[int]) -> None:
        """A write of this instance moved `key` to `generation`, changing `pks` only."""
        self._cache.changed(key, generation, pks)

    def forget(self, key: object) -> None:
        """Drops everything of `key` (a write that did not commit)."""
        self._cache.forget(key)
