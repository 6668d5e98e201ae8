"""Rebuilding the vector indices for another embedding model, while queries go on.

1. The indices behind the aliases get a write block: a process still indexing with the old
   model fails loudly instead of writing into indices that are being replaced (stop the
   indexers first; their events wait in the bus). Reads go on.
2. New indices, named for the new model and the next generation, are filled by reading
   every record of the old ones in (workspace, id) order and giving it the vector the
   caller's callback returns (the command line owns the embedding model and re-embeds the
   text the indexer embedded: ragstream.cli.reindex).
3. Once all three are complete and refreshed, one `_aliases` request moves every alias: a
   process opening the store afterwards sees only the new indices, never a mix, and a
   running one of the new model moves to them within seconds (follow.py).
4. The old indices are kept, still write-blocked, for processes that run the old model until
   they are restarted; `delete_old=True` drops them at once.
A failure before step 3 deletes the new indices and lifts the write block: nothing changed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace

from elasticsearch import ApiError, AsyncElasticsearch, TransportError

from ragstream.common.models import Collection, SearchRecord, Vector
from ragstream.common.storage.elastic import codec, mappings
from ragstream.common.storage.elastic.bulk import bulk_write
from ragstream.common.storage.elastic.layout import (
    IndexLayout,
    alias_targets,
    create_index,
    ensure_templates,
)
from ragstream.common.storage.elastic.model import ModelFingerprint
from ragstream.common.storage.elastic.paging import all_hits
from ragstream.common.vectors import unit_vector

log = logging.getLogger(__name__)
BATCH = 256
"""Records read, re-embedded and written together."""

Vectors = Callable[[Collection, Sequence[SearchRecord]], Awaitable[Sequence[Vector]]]
"""The new vectors of a batch of a collection's records, in their order (the caller owns
the embedding model: the store builds no provider)."""
Progress = Callable[[Collection, int], None]
"""Told how many records of a collection were just copied."""


class ReindexError(RuntimeError):
    """The rebuild could not start or complete; the indices in use are unchanged."""


@dataclass
class ReindexResult:
    model: ModelFingerprint
    old: dict[Collection, str] = field(default_factory=dict)
    new: dict[Collection, str] = field(default_factory=dict)
    copied: dict[Collection, int] = field(default_factory=dict)
    seconds: float = 0.0
    old_deleted: bool = False


async def current_indices(client: AsyncElasticsearch, layout: IndexLayout) -> dict[Collection, str]:
    found: dict[Collection, str] = {}
    for collection in Collection:
        targets = await alias_targets(client, layout.alias(collection.value))
        if len(targets) != 1:
            raise ReindexError(
                f"alias {layout.alias(collection.value)!r} points to {targets or 'nothing'}: "
                "there is no single index to rebuild (start the service once to create them)"
            )
        found[collection] = targets[0]
    return found


async def next_generation(client: AsyncElasticsearch, layout: IndexLayout) -> int:
    generations = [0]
    for collection in Collection:
        existing = await client.indices.get(index=layout.pattern(collection.value))
        generations += [layout.generation_of(name, collection) for name in existing.body]
    return max(generations) + 1


@dataclass(frozen=True, slots=True)
class VectorIndices:
    """The vector indices behind one prefix's aliases, as `ragstream reindex` rebuilds them."""

    client: AsyncElasticsearch
    layout: IndexLayout

    async def reembed(
        self,
        model: ModelFingerprint,
        vectors: Vectors,
        *,
        delete_old: bool = False,
        progress: Progress | None = None,
    ) -> ReindexResult:
        """Rebuilds every collection for `model` with the vectors the callback gives (the
        steps in the module's docstring)."""
        return await _rebuild(self.client, self.layout, model, vectors, delete_old, progress)

    async def drop_superseded(self) -> list[str]:
        """Deletes the vector indices of the prefix that no alias points to; returns their
        names."""
        return await _drop_superseded(self.client, self.layout)


async def _rebuild(
    client: AsyncElasticsearch,
    layout: IndexLayout,
    model: ModelFingerprint,
    vectors: Vectors,
    delete_old: bool,
    progress: Progress | None,
) -> ReindexResult:
    started = time.monotonic()
    result = ReindexResult(model)
    await ensure_templates(client, layout)
    result.old = await current_indices(client, layout)
    generation = await next_generation(client, layout)
    result.new = {c: layout.vector_index(c, result.model, generation) for c in Collection}
    old_names = ",".join(result.old.values())
    await client.indices.add_block(index=old_names, block="write")
    # The copy reads by search: without this refresh, records written shortly before the
    # block would not be visible to it and would be lost.
    await client.indices.refresh(index=old_names)
    try:
        for collection in Collection:
            result.copied[collection] = await _copy(client, result, collection, vectors, progress)
        await _switch_aliases(client, layout, result)
    except BaseException:
        await _undo(client, result)
        raise
    if delete_old:
        await client.indices.delete(index=old_names)
        result.old_deleted = True
    result.seconds = time.monotonic() - started
    return result


async def _copy(
    client: AsyncElasticsearch,
    result: ReindexResult,
    collection: Collection,
    vectors: Vectors,
    progress: Progress | None,
) -> int:
    source, target = result.old[collection], result.new[collection]
    if not await create_index(client, target, mappings.search_mappings(result.model), None):
        raise ReindexError(f"index {target!r} already exists")
    # Bulk loading without refreshes is several times faster; searches come after the swap.
    await client.indices.put_settings(index=target, settings={"refresh_interval": "-1"})
    copied = 0
    batch: list[SearchRecord] = []
    hits = all_hits(client, source, {"match_all": {}}, ["workspace", "id"], page_size=BATCH)
    async for hit in hits:
        batch.append(codec.from_source(hit["_source"]))
        if len(batch) == BATCH:
            copied += await _write(client, target, batch, collection, vectors)
            _tell(progress, collection, len(batch))
            batch = []
    if batch:
        copied += await _write(client, target, batch, collection, vectors)
        _tell(progress, collection, len(batch))
    await client.indices.put_settings(index=target, settings={"refresh_interval": None})
    await client.indices.refresh(index=target)
    count = (await client.count(index=target))["count"]
    if count != copied:
        raise ReindexError(f"{target!r} holds {count} records after copying {copied}")
    return copied


async def _write(
    client: AsyncElasticsearch,
    index: str,
    records: Sequence[SearchRecord],
    collection: Collection,
    vectors: Vectors,
) -> int:
    actions = []
    for record, vector in zip(records, await vectors(collection, records), strict=True):
        unit = unit_vector(vector, record.id)
        source = codec.to_source(replace(record, vector=unit), unit)
        actions.append(
            {
                "_op_type": "index",
                "_index": index,
                "_id": codec.doc_id(record.workspace, record.id),
                "_source": source,
            }
        )
    return await bulk_write(client, actions, refresh="false")


async def _switch_aliases(
    client: AsyncElasticsearch, layout: IndexLayout, result: ReindexResult
) -> None:
    # The new indices were bulk-written without refreshes: make every copied record
    # searchable first, so no query after the switch sees an emptier index than before it.
    await client.indices.refresh(index=",".join(result.new.values()))
    actions: list[dict[str, dict[str, str]]] = []
    for collection in Collection:
        alias = layout.alias(collection.value)
        actions.append({"remove": {"index": result.old[collection], "alias": alias}})
        actions.append({"add": {"index": result.new[collection], "alias": alias}})
    await client.indices.update_aliases(actions=actions)


async def _undo(client: AsyncElasticsearch, result: ReindexResult) -> None:
    """Drops the new indices and lifts the write block (best effort: the original error
    is the one reported)."""
    steps: list[Callable[[], Awaitable[object]]] = [
        lambda: client.indices.delete(index=",".join(result.new.values()), ignore_unavailable=True),
        lambda: client.indices.put_settings(
            index=",".join(result.old.values()), settings={"index.blocks.write": False}
        ),
    ]
    for step in steps:
        try:
            await step()
        except (ApiError, TransportError):  # cleanup must not hide the error that caused it
            log.exception("could not undo part of an interrupted reindex")


def _tell(progress: Progress | None, collection: Collection, count: int) -> None:
    if progress is not None:
        progress(collection, count)


async def _drop_superseded(client: AsyncElasticsearch, layout: IndexLayout) -> list[str]:
    in_use = set((await current_indices(client, layout)).values())
    dropped: list[str] = []
    for collection in Collection:
        existing = await client.indices.get(index=layout.pattern(collection.value))
        dropped += sorted(name for name in existing.body if name not in in_use)
    if dropped:
        await client.indices.delete(index=",".join(dropped))
    return dropped
