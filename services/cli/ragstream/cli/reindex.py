"""`ragstream reindex`: rebuild the Elasticsearch vector indices for the configured model.

Run it after changing `embedding.*` (a process started with another model than the
indices hold refuses to start and names this command). Stop the indexers first: the old
indices are write-blocked while their records are re-embedded into new ones; queries keep
being answered from the old indices until the aliases move, in one atomic step, at the end.
See ragstream.common.storage.elastic.reindex for the steps.
"""

from __future__ import annotations

from collections import Counter

from rich.console import Console

from ragstream.common.config import Settings
from ragstream.common.models import Collection
from ragstream.common.providers.embedding import build_embedder
from ragstream.common.storage.elastic.client import connect
from ragstream.common.storage.elastic.layout import IndexLayout
from ragstream.common.storage.elastic.reindex import drop_superseded, reindex
from ragstream.indexer.stages.merge_records import embedding_text

out = Console(stderr=True)


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
        client = await connect(settings.elasticsearch)
        try:
            dropped = await drop_superseded(
                client, IndexLayout(settings.elasticsearch.index_prefix)
            )
        finally:
            await client.close()
        out.print(f"deleted {len(dropped)} superseded indices: {', '.join(dropped) or '-'}")
        return 0
    embedder = build_embedder(settings.embedding)
    client = await connect(settings.elasticsearch)
    copied: Counter[Collection] = Counter()

    def progress(collection: Collection, count: int) -> None:
        copied[collection] += count
        out.print(f"  {collection.value}: {copied[collection]} re-embedded", end="\r")

    try:
        result = await reindex(
            client,
            IndexLayout(settings.elasticsearch.index_prefix),
            embedder,
            embedding_text,
            delete_old=delete_old,
            progress=progress,
        )
    finally:
        await client.close()
        await embedder.close()
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
    return 0
