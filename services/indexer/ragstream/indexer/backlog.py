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


def documents_drained(
    bus: Bus, topics: Topics, group_id: str, limit_s: float
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """Waits (at most `limit_s`) until stage 1 has committed everything queued."""

    async def drained() -> bool:
        return await bus.pending(group_id, [topics.documents]) == 0

    return settling(drained, limit_s, "document backlog", bus.pending_poll_s)


def wait_limit(limit_s: float, last_batch_s: float, share: float) -> float:
    """How long to wait for a backlog: `limit_s`, or longer after a batch that ran
    `last_batch_s`, so that batches take at most `share` of the time while it lasts."""
    return max(limit_s, last_batch_s * (1.0 - share) / share)


def settling(
    drained: Callable[[], Awaitable[bool]],
    limit_s: float,
    what: str,
    poll_s: float,
    share: float = 1.0,
) -> Callable[[asyncio.Event], Awaitable[None]]:
    # The time between one wait's end and the next wait is the batch the consumer ran.
    ended: float | None = None

    async def settle(stop: asyncio.Event) -> None:
        nonlocal ended
        loop = asyncio.get_running_loop()
        last_batch_s = loop.time() - ended if ended is not None else 0.0
        deadline = loop.time() + wait_limit(limit_s, last_batch_s, share)
        try:
            # Polls: committed offsets live in the bus, which signals nothing when they move.
            while not stop.is_set() and loop.time() < deadline:
                try:
                    if await drained():
                        return
                except Exception as exc:  # noqa: BLE001 - only an optimization: go on now
                    log.debug("%s unknown (%s); going on without waiting", what, exc)
                    return
                await asyncio.sleep(poll_s)
        finally:
            ended = loop.time()

    return settle


def indexing_drained(
    bus: Bus, topics: Topics, group_id: str, limit_s: float, share: float = 1.0
) -> Callable[[asyncio.Event], Awaitable[None]]:
    """Waits until stages 1 and 2 have committed everything queued: the community step's
    settle wait. At most `limit_s`, or longer after a long batch (`wait_limit`): a rebuild
    of a large workspace's communities takes seconds, and while documents keep arriving it
    should not run back to back."""

    async def drained() -> bool:
        if await bus.pending(group_id, [topics.documents]):
            return False
        return not await bus.pending(merge_group(group_id), [topics.graph_merge])

    return settling(drained, limit_s, "indexing backlog", bus.pending_poll_s, share)
