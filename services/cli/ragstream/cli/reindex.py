"""`ragstream reindex`: rebuild the Elasticsearch vector indices for the configured model.

Run it after changing `embedding.*` (a process started with another model than the
indices hold refuses to start and names this command). Stop the indexers first: the old
indices are write-blocked while their records are re-embedded into new ones; queries keep
being answered from the old indices until the aliases move, in one atomic step, at the end.
The command owns the embedding model and re-embeds exactly the text the indexer embedded;
the store moves the records and the aliases (ragstream.common.storage.elastic.reindex).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console

from ragstream.common.config import Settings
from ragstream.common.models import Collection, SearchRecord, Vector
from ragstream.common.providers.embedding import Embedder, build_embedder
from ragstream.common.storage.elastic.backend import embedding_model, open_vector_indices
from ragstream.common.storage.elastic.reindex import Progress, ReindexResult, VectorIndices
from ragstream.indexer.stages.merge_records import embedding_text

out = Console(stderr=True)


async def reembed(
    indices: VectorIndices,
    embedder: Embedder,
    *,
    delete_old: bool = False,
    progress: Progress | None = None,
) -> ReindexResult:
    """Rebuilds the indices with `embedder`'s vectors of each record's embedding text."""

    async def vectors(collection: Collection, records: Sequence[SearchRecord]) -> list[Vector]:
        return list(await embedder.embed([embedding_text(collection, r) for r in records]))

    model = await embedding_model(embedder)
    return await indices.reembed(model, vectors, delete_old=delete_old, progress=progress)


async def run_reindex(settings: Settings, delete_old: bool, cleanup: bool) -> int:
    """Exit status: 0 done, 2 nothing to rebuild with this configuration.

    `cleanup` only deletes the indices that earlier rebuilds superseded (no alias points to
    them any more), once no process runs the old model."""
    if settings.storage.search != "elasticsearch":
        out.print(
            "ragstream reindex rebuilds Elasticsearch indices (storage.search = elasticsearch); "
            "the embedded store is rebuilt by ingesting again into a new data_dir"
        )
        return 2
    if cleanup:
        async with open_vector_indices(settings.elasticsearch) as indices:
            dropped = await indices.drop_superseded()
        out.print(f"deleted {len(dropped)} superseded indices: {', '.join(dropped) or '-'}")
        return 0
    embedder = build_embedder(settings.embedding)
    copied: Counter[Collection] = Counter()

    def progress(collection: Collection, count: int) -> None:
        copied[collection] += count
        out.print(f"  {collection.value}: {copied[collection]} re-embedded", end="\r")

    try:
        async with open_vector_indices(settings.elasticsearch) as indices:
            result = await reembed(indices, embedder, delete_old=delete_old, progress=progress)
    finally:
        await embedder.close()
    _report(result)
    return 0


def _report(result: ReindexResult) -> None:
    out.print(f"rebuilt for {result.model} in {result.seconds:.0f} s; aliases moved:")
    for collection in Collection:
        out.print(
            f"  {collection.value}: {result.old[collection]} -> {result.new[collection]} "
            f"({result.copied[collection]} records)"
        )
    if not result.old_deleted:
        out.print(
            "old indices kept (write-blocked) for processes still on the old model; delete "
            "them once every process runs the new one: ragstream reindex --cleanup"
        )
