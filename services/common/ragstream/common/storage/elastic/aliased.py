"""The shape shared by the stores that live in one plain index behind an alias
(documents, mentions, LLM cache): opening creates the templates and the index if missing,
and the client is shared: the backend that opened it closes it."""

from __future__ import annotations

from typing import ClassVar, Self

from elasticsearch import AsyncElasticsearch

from ragstream.common.storage.elastic.bulk import RefreshPolicy
from ragstream.common.storage.elastic.layout import (
    IndexLayout,
    ensure_plain_index,
    ensure_templates,
)


class AliasedStore:
    ROLE: ClassVar[str]
    """The index role, e.g. "documents"; the alias is named after it."""
    DEFAULT_REFRESH: ClassVar[RefreshPolicy] = "false"
    """When writes become searchable (see bulk.py): each store's own reads decide."""

    def __init__(
        self,
        client: AsyncElasticsearch,
        alias: str,
        *,
        refresh: RefreshPolicy | None = None,
    ) -> None:
        self._client = client
        self._alias = alias
        self._refresh: RefreshPolicy = refresh or self.DEFAULT_REFRESH

    @classmethod
    async def open(
        cls,
        client: AsyncElasticsearch,
        layout: IndexLayout,
        *,
        refresh: RefreshPolicy | None = None,
    ) -> Self:
        await ensure_templates(client, layout)
        alias = await ensure_plain_index(client, layout, cls.ROLE)
        return cls(client, alias, refresh=refresh)

    async def close(self) -> None:
        """Nothing to release: the client is shared and closed by whoever opened it."""

    async def refresh(self) -> None:
        await self._client.indices.refresh(index=self._alias)
