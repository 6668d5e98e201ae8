"""Stage 2 waits for stage 1's backlog: a burst of documents touching one key merges it once.

The merge consumer calls `settle` before each batch; it returns once stage 1 has committed
everything queued for the group, or after `indexer.merge_settle_s`, whichever comes first.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ragstream.common.bus.progress import indexing_progress
from ragstream.common.bus.protocols import Bus
from ragstream.common.bus.topics import Topics

log = logging.getLogger(__name__)
SETTLE_POLL_S = 0.2


def documents_drained(
    bus: Bus, topics: Topics, group_id: str, limit_s: float
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """Waits (at most `limit_s`) until stage 1 has committed everything queued."""

    async def settle(stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        # Polls: committed offsets live in the bus, which signals nothing when they move.
        while not stop.is_set() and loop.time() < deadline:
            try:
                progress = await indexing_progress(bus, topics, group_id)
            except Exception as exc:  # noqa: BLE001 - only an optimization: merge now instead
                log.debug("document backlog unknown (%s); merging without waiting", exc)
                return
            if progress.documents == 0:
                return
            await asyncio.sleep(SETTLE_POLL_S)

    return settle
