"""Stage 2 waits for stage 1's backlog: a burst of documents touching one key merges it once;
the community step waits for both stages: a burst changing one community reports it once.

A consumer calls `settle` before each batch; it returns once the stages before it have
committed everything queued for the group, or after its limit (`indexer.merge_settle_s`,
`communities.settle_s`), whichever comes first.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ragstream.common.bus.protocols import Bus
from ragstream.common.bus.topics import Topics, merge_group

log = logging.getLogger(__name__)
SETTLE_POLL_S = 0.2


def documents_drained(
    bus: Bus, topics: Topics, group_id: str, limit_s: float
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """Waits (at most `limit_s`) until stage 1 has committed everything queued."""

    async def drained() -> bool:
        return await bus.pending(group_id, [topics.documents]) == 0

    return _settling(drained, limit_s, "document backlog")


def _settling(
    drained: Callable[[], Awaitable[bool]], limit_s: float, what: str
) -> Callable[[asyncio.Event], Awaitable[None]]:
    async def settle(stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        # Polls: committed offsets live in the bus, which signals nothing when they move.
        while not stop.is_set() and loop.time() < deadline:
            try:
                if await drained():
                    return
            except Exception as exc:  # noqa: BLE001 - only an optimization: go on now instead
                log.debug("%s unknown (%s); going on without waiting", what, exc)
                return
            await asyncio.sleep(SETTLE_POLL_S)

    return settle


def indexing_drained(
    bus: Bus, topics: Topics, group_id: str, limit_s: float
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """Waits (at most `limit_s`) until stages 1 and 2 have committed everything queued: the
    community step's settle wait."""

    async def drained() -> bool:
        if await bus.pending(group_id, [topics.documents]):
            return False
        return not await bus.pending(merge_group(group_id), [topics.graph_merge])

    return _settling(drained, limit_s, "indexing backlog")
