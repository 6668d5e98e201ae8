"""Leases: a query gives its working slot up while it waits on a remote model.

A query spends most of its time waiting: for the LLM's keywords, for the embedding request,
for the reranker, for the answer. Holding a slot of the server's bounded concurrency through
those waits would bound the queries in flight by the slots, not by the CPU, and the shared
embedding scheduler would see a burst trickle in a few queries at a time, so it could not
batch it. So whatever runs the query (the transport's admission control) may `bind` a
`Lease` to the call, and the stages wrap each remote await in `remote()`: the slot is
released for the wait and taken back after it, ahead of calls that have not started yet
(they are behind a call already under way, which is nearer to its answer).

A lease is also told when its call queues for a provider client's concurrency limit
(`ragstream.common.providers.backlog`): that wait is the backlog's, not the call's. And a
remote wait tells the embedding scheduler that the call's announced embedding request, if
it has one, is not near meanwhile (`ragstream.common.providers.forecast.far`).

The query package knows no transport: without a bound lease (tests, the CLI's local queries)
`remote()` gives no slot up.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import AsyncIterator, Iterator
from typing import Protocol

from ragstream.common.providers.backlog import Observer, observed
from ragstream.common.providers.forecast import far


class Lease(Observer, Protocol):
    """The slot a call holds. `release` and `reacquire` come in pairs, possibly nested or
    concurrent (searches and embeddings of one query may overlap): the slot is given up at
    the first release and taken back at the last reacquire. `queued` and `dequeued` (see
    `Observer`) bracket its waits for a provider's slot, which happen within remote waits."""

    def release(self) -> None: ...

    async def reacquire(self) -> None:
        """Returns once the slot is held again; cancellation leaves it released."""
        ...


_current: contextvars.ContextVar[Lease | None] = contextvars.ContextVar(
    "ragstream_query_lease", default=None
)


@contextlib.contextmanager
def bound(lease: Lease | None) -> Iterator[None]:
    """Makes `lease` the one `remote()` releases and the provider clients tell of their
    queues, in this task and those it starts (None: a call without admission, which has no
    slot to give up)."""
    token = _current.set(lease)
    try:
        with observed(lease):
            yield
    finally:
        _current.reset(token)


@contextlib.asynccontextmanager
async def remote() -> AsyncIterator[None]:
    """Releases the call's slot (if it has one) while the block awaits a remote model.

    The slot is taken back when the block ends or fails, not when it is cancelled: a call
    cancelled (deadline, client gone) has nothing left to do with it."""
    lease = _current.get()
    if lease is not None:
        lease.release()
    try:
        with far():  # the call's coming embedding request is not near meanwhile
            yield
    except BaseException as exc:
        if lease is not None and isinstance(exc, Exception):
            await lease.reacquire()  # a failed call may go on (a fallback, a note)
        raise
    if lease is not None:
        await lease.reacquire()
