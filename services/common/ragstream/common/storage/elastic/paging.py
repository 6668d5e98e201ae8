"""Reading every hit of a query, page by page, in a fixed order (search_after)."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from typing import Any

from elasticsearch import AsyncElasticsearch

PAGE_SIZE = 1000


async def all_hits(
    client: AsyncElasticsearch,
    index: str,
    query: dict[str, Any],
    sort: Sequence[str],
    *,
    source: bool = True,
    page_size: int = PAGE_SIZE,
) -> AsyncGenerator[dict[str, Any], None]:
    """Every hit, ordered by `sort` (ascending keyword fields that together are unique, so
    no hit is skipped or repeated between pages)."""
    after: list[Any] | None = None
    while True:
        response = await client.search(
            index=index,
            query=query,
            sort=[{field: "asc"} for field in sort],
            size=page_size,
            source=source,
            search_after=after,
            track_total_hits=False,
        )
        hits = response["hits"]["hits"]
        for hit in hits:
            yield hit
        if len(hits) < page_size:
            return
        after = hits[-1]["sort"]
