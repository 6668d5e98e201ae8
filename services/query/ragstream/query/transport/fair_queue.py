"""The admission queue's fairness (admission.py): a FIFO per workspace, served in turn.

A freed slot goes to the workspaces in turn (round robin), so a flood from one tenant
delays another by at most one call per flooding tenant. When the queue is full, a call
from a workspace whose queue is shorter than the longest takes the place of the newest
call of the longest (`victim_for`): a tenant can fill the queue only while nobody else
needs it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field


@dataclass(slots=True, eq=False)
class Waiter:
    """A call waiting for a slot; `turn` is resolved when it gets one (or is refused)."""

    workspace: str
    deadline: float | None
    turn: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class FairQueue:
    def __init__(self) -> None:
        self._queues: dict[str, deque[Waiter]] = {}
        self._turns: deque[str] = deque()

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def __bool__(self) -> bool:
        return bool(self._queues)

    def sizes(self) -> dict[str, int]:
        """Waiters per workspace that has any."""
        return {w: len(q) for w, q in self._queues.items()}

    def push(self, waiter: Waiter) -> None:
        if waiter.workspace not in self._queues:
            self._queues[waiter.workspace] = deque()
            self._turns.append(waiter.workspace)
        self._queues[waiter.workspace].append(waiter)

    def remove(self, waiter: Waiter) -> None:
        """Takes `waiter` out, if it is still queued."""
        queue = self._queues.get(waiter.workspace)
        if queue is None or waiter not in queue:
            return
        queue.remove(waiter)
        if not queue:
            del self._queues[waiter.workspace]
            self._turns.remove(waiter.workspace)

    def pop(self) -> Waiter:
        """The oldest waiter of the workspace whose turn it is; the queue must not be empty."""
        workspace = self._turns.popleft()
        queue = self._queues[workspace]
        waiter = queue.popleft()
        if queue:
            self._turns.append(workspace)
        else:
            del self._queues[workspace]
        return waiter

    def victim_for(self, workspace: str) -> Waiter | None:
        """The newest waiter of the longest queue, when `workspace`'s is shorter by more
        than the call it would add (taken out of the queue), else None."""
        sizes = self.sizes()
        longest = max(sizes, key=lambda w: sizes[w], default=None)
        if longest is None or sizes[longest] <= sizes.get(workspace, 0) + 1:
            return None
        victim = self._queues[longest][-1]
        self.remove(victim)
        return victim
