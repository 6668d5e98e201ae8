"""`ragstream communities rebuild`: a full, seeded rebuild of one workspace's communities.

The rebuild is asked of the indexer, not done here: the community step is the single writer
of a workspace's communities and holds them in memory, so the request is an event on the
communities topic (the workspace's one partition), applied in order with the merges around
it. The command waits until the indexer has applied it, then prints the communities per level.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter

from rich.console import Console

from ragstream.common.bus.topics import community_group
from ragstream.common.config import WORKSPACE_PATTERN, Settings
from ragstream.common.events import MergeKey, encode_community
from ragstream.common.registry import open_backends
from ragstream.indexer.stages.communities import REBUILD_KEY

out = Console(highlight=False)


async def request_rebuild(settings: Settings, workspace: str, wait_s: float) -> int:
    """Exit status: 0 rebuilt (or queued, with no wait), 1 not applied within `wait_s`,
    2 a workspace name that cannot exist."""
    if re.fullmatch(WORKSPACE_PATTERN, workspace) is None:
        out.print(f"--workspace {workspace!r} is not a valid workspace name")
        return 2
    if not settings.communities.enabled:
        out.print("communities.enabled is false: the indexer keeps no communities to rebuild")
        return 2
    async with open_backends(settings) as backends:
        topics, bus = backends.topics, backends.bus
        await bus.publisher.publish(
            topics.communities, [encode_community(MergeKey(workspace, REBUILD_KEY), ())]
        )
        if wait_s <= 0:
            out.print(f"queued a rebuild of {workspace}'s communities")
            return 0
        group = community_group(settings.bus.group_id)
        deadline = time.monotonic() + wait_s
        while await bus.pending(group, [topics.communities], workspace):
            if time.monotonic() > deadline:
                out.print(
                    f"queued a rebuild of {workspace}'s communities; no indexer applied it "
                    f"within {wait_s:g} s (it is applied when one runs)"
                )
                return 1
            await asyncio.sleep(0.2)
        levels = Counter(c.level for c in await backends.stores.communities.list(workspace))
    shown = ", ".join(f"level {level}: {levels[level]}" for level in sorted(levels)) or "none"
    out.print(f"rebuilt {workspace}'s communities ({shown})")
    return 0
