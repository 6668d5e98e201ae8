"""Following the vector aliases after `ragstream reindex`, with no restart.

A search store resolves its aliases when it opens and then uses the indices themselves. A
rebuild moves the aliases in one request; every CHECK_S seconds (at most, and only when the
store is used) the store looks at them again and moves to the new indices when they hold
its own embedding model, all three at once. Indices of another model are never read with
this process's vectors: the store keeps the old ones (write-blocked by the rebuild) and says
once that the process needs the new embedding settings and a restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from elasticsearch import ApiError, AsyncElasticsearch, TransportError

from ragstream.common.models import Collection
from ragstream.common.storage.elastic.layout import IndexLayout, index_model
from ragstream.common.storage.elastic.model import ModelFingerprint

log = logging.getLogger(__name__)
CHECK_S = 2.0


class AliasFollower:
    def __init__(
        self,
        client: AsyncElasticsearch,
        layout: IndexLayout,
        model: ModelFingerprint,
        indices: Mapping[Collection, str],
        *,
        check_s: float = CHECK_S,
    ) -> None:
        self._client = client
        self._layout = layout
        self._model = model
        self.indices = dict(indices)
        self._check_s = check_s
        self._next_check = 0.0
        self._refused: dict[Collection, str] = {}
        """The last targets of another model, so that they are reported once."""

    async def current(self) -> dict[Collection, str]:
        """The indices to use now (looked up again when CHECK_S have passed)."""
        now = asyncio.get_running_loop().time()
        if now >= self._next_check:
            self._next_check = now + self._check_s  # concurrent callers do not look too
            try:
                await self._follow()
            except (ApiError, TransportError) as exc:
                log.debug("alias check failed (%s); keeping %s", exc, self.indices)
        return self.indices

    async def _follow(self) -> None:
        targets = await self._targets()
        if len(targets) != len(Collection) or targets == self.indices:
            return  # an alias missing or mid-change: keep what works
        for index in set(targets.values()) - set(self.indices.values()):
            held = await index_model(self._client, index)
            if held != self._model:
                if targets != self._refused:
                    self._refused = targets
                    log.warning(
                        "the aliases now point to %s, which hold %s; this process runs %s and "
                        "keeps serving %s: restart it with the new embedding settings",
                        sorted(targets.values()),
                        held,
                        self._model,
                        sorted(self.indices.values()),
                    )
                return
        log.info("aliases moved: now serving %s", sorted(targets.values()))
        self.indices = targets

    async def _targets(self) -> dict[Collection, str]:
        aliases = {self._layout.alias(c.value): c for c in Collection}
        found = await self._client.indices.get_alias(name=",".join(aliases))
        targets: dict[Collection, list[str]] = {}
        for index, entry in found.body.items():
            for alias in entry.get("aliases", {}):
                if alias in aliases:
                    targets.setdefault(aliases[alias], []).append(index)
        return {c: names[0] for c, names in targets.items() if len(names) == 1}
