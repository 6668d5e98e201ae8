"""The shared embedding scheduler: one queue in front of one embedder, for every caller.

The indexer (chunks, merged entities and relations) and the query service (query text and
keywords) share one embedding provider. Sending each caller's texts on its own would waste
provider calls and let a long indexing backlog delay every query, so all requests go through
one `EmbeddingScheduler`:

- requests are merged into provider calls of at most `batch_size` texts and `batch_tokens`
  tokens; a request larger than that is split across calls and reassembled in order. A full
  batch goes as soon as a call slot is free; a partial one waits while a call as urgent as
  its requests is out (Nagle's rule, calls_out.py) and while requests as urgent that
  callers announced are near (the queries a server has received and not yet embedded,
  forecast.py; at most AWAIT_ROUND_TRIPS round trips), else `batch_window_ms` from its
  oldest request. A request that finds the scheduler idle (nothing queued, in flight or
  near, and no other request within the window before it) is sent at once: a lone query
  does not wait for company, and a burst goes out in a few full batches;
- at most `concurrency` calls are in flight. A batch is packed only once a call slot is free,
  so a query that arrives while indexing saturates the provider goes into the very next call,
  ahead of the backlog: its latency grows by at most one provider round trip;
- a request whose caller stopped waiting (cancelled, or its `asyncio.timeout` expired) before
  its batch was packed is never sent; a batch whose requests all went away makes no call;
- a failed call fails every request in that batch with the provider's error; callers decide
  whether to retry or fall back.

    async with EmbeddingScheduler(build_embedder(cfg), cfg) as scheduler:
        query_embedder = scheduler.view(Priority.QUERY)
        vectors = await query_embedder.embed([query, low_level, high_level])
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import enum
import itertools
import logging
import math
from collections import deque
from collections.abc import Callable, Sequence
from typing import Self

import numpy as np
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from ragstream.common.config import EmbeddingConfig
from ragstream.common.instruments import record_embedding_batch
from ragstream.common.providers import ProviderError
from ragstream.common.providers.batch_plan import counted_bytes, plan_batch, token_bounds
from ragstream.common.providers.calls_out import CallsOut
from ragstream.common.providers.embedding import Embedder, Matrix
from ragstream.common.providers.embedding_request import EmbeddingRequest, Piece, fail_pieces
from ragstream.common.providers.forecast import Forecast
from ragstream.common.telemetry import linked_root_span, own
from ragstream.common.text.tokens import count_tokens

log = logging.getLogger(__name__)


AWAIT_ROUND_TRIPS = 4.0
"""How long a partial batch waits for near announced requests (forecast.py), in recent
provider round trips from its oldest request's arrival."""

INLINE_COUNT_BYTES = 16_384
"""Texts to count exactly up to this size (about 4,000 tokens, a millisecond) are counted on
the event loop; more go to a worker thread."""


class Priority(enum.IntEnum):
    """Who is waiting for the vectors; a lower value is served first."""

    QUERY = 0
    """A client is waiting for an answer."""
    MERGE = 1
    """Stage 2 of indexing: a merged entity or relation description."""
    INDEXING = 2
    """Stage 1 of indexing (chunking and extraction): the chunks of a changed document, the
    bulk of the work."""


class SchedulerClosedError(RuntimeError):
    """The scheduler was closed (or its owner task stopped) before the request was answered."""


class EmbeddingScheduler:
    """An Embedder that batches, prioritizes and rate-limits calls to the embedder it wraps.

    `embed(texts)` uses the priority given here; `view(priority)` gives an Embedder for one
    priority, to hand to a stage that should not know about scheduling. The scheduler owns the
    wrapped embedder and closes it in `close()`.
    """

    def __init__(
        self,
        embedder: Embedder,
        cfg: EmbeddingConfig,
        *,
        priority: Priority = Priority.INDEXING,
        count: Callable[[str], int] = count_tokens,
    ) -> None:
        self._embedder = embedder
        self._max_texts = cfg.batch_size
        self._max_tokens = cfg.batch_tokens
        self._window_s = cfg.batch_window_ms / 1000
        self._slots = asyncio.Semaphore(cfg.concurrency)
        self._priority = priority
        self._count = count
        self._queues: dict[int, deque[EmbeddingRequest]] = {p: deque() for p in Priority}
        self._pending_texts = 0
        self._pending_tokens = 0
        self._out = CallsOut()
        self._last_arrival = -math.inf
        self._changed = asyncio.Event()
        """Set when a request arrives or is withdrawn from the forecast, or a call comes
        back."""
        self.forecast = Forecast(self._changed.set)
        """Requests announced by callers that will ask for vectors soon (forecast.py)."""
        self._owner: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def name(self) -> str:
        return self._embedder.name

    @property
    def dimensions(self) -> int:
        return self._embedder.dimensions

    @property
    def languages(self) -> frozenset[str]:
        return self._embedder.languages

    def view(self, priority: Priority) -> PriorityView:
        return PriorityView(self, priority)

    async def start(self) -> None:
        """Starts the owner task; optional, the first `embed` starts it too."""
        self._ensure_started()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def embed(self, texts: Sequence[str], *, priority: Priority | None = None) -> Matrix:
        """One row per text, in order. Cancelling the caller withdraws the request if it has
        not been sent yet; raises the provider's error if its batch failed."""
        self.forecast.arrived()  # also when there is nothing to embed: none is coming
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        self._ensure_started()
        tokens = await self._token_bounds(texts)
        self._ensure_started()  # closed while the texts were counted: nothing would serve it
        loop = asyncio.get_running_loop()
        now = loop.time()
        priority = self._priority if priority is None else priority
        idle = not (self._pending_texts or self._out or self.forecast.any_near(priority))
        request = EmbeddingRequest(
            texts=list(texts),
            tokens=tokens,
            priority=priority,
            future=loop.create_future(),
            enqueued=now,
            alone=idle and now - self._last_arrival >= self._window_s,
            caller=trace.get_current_span().get_span_context(),
        )
        self._last_arrival = now
        self._queues[request.priority].append(request)
        self._pending_texts += len(tokens)
        self._pending_tokens += sum(tokens)
        self._changed.set()
        # Cancelling this task cancels the future too, which is what marks the request as
        # withdrawn for the owner task.
        return await request.future

    async def _token_bounds(self, texts: Sequence[str]) -> list[int]:
        """The texts' token bounds (batch_plan.token_bounds). When more than
        INLINE_COUNT_BYTES need an exact count (a document's chunks; tiktoken takes about
        0.3 ms per thousand tokens), they are counted on a worker thread, where tiktoken runs
        without the GIL, beside the event loop; a query's texts are bounded here."""
        short = self._max_tokens // self._max_texts
        if counted_bytes(texts, short) <= INLINE_COUNT_BYTES:
            return token_bounds(texts, self._count, short)
        return await asyncio.to_thread(token_bounds, texts, self._count, short)

    async def close(self) -> None:
        """Fails queued and in-flight requests with SchedulerClosedError, stops the owner
        task, then closes the wrapped embedder."""
        if self._closed:
            return
        self._closed = True
        if self._owner is not None:
            self._owner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._owner
        # The owner fails the queue on its way out, unless it was cancelled before it ever ran.
        self._fail_queued(SchedulerClosedError("the embedding scheduler was closed"))
        await self._embedder.close()

    def _ensure_started(self) -> None:
        if self._closed:
            raise SchedulerClosedError("the embedding scheduler is closed")
        if self._owner is None:
            # A fresh context: the owner outlives the caller that happened to start it, and
            # must not carry that caller's span (or anything else) into every later batch.
            self._owner = asyncio.get_running_loop().create_task(
                self._run(), name="embedding-scheduler", context=contextvars.Context()
            )
        elif self._owner.done():
            raise SchedulerClosedError("the embedding scheduler's owner task has stopped")

    async def _run(self) -> None:
        try:
            async with asyncio.TaskGroup() as calls:
                while True:
                    await self._gather()
                    # Packing only once a slot is free is what lets a late query overtake
                    # the backlog: it is in the queue when the batch is formed.
                    await self._slots.acquire()
                    pieces = self._take_batch()
                    if pieces:
                        urgent = min(request.priority for request, _, _ in pieces)
                        call = self._out.sent(urgent, asyncio.get_running_loop().time())
                        calls.create_task(self._send(pieces, call))
                    else:
                        self._slots.release()
        finally:
            self._fail_queued(SchedulerClosedError("the embedding scheduler stopped"))

    async def _gather(self) -> None:
        """Returns once a batch is worth packing: something is queued, and either a full
        batch is queued, or no call as urgent as the queue's most urgent request is out and
        the window since the oldest queued request has passed."""
        loop = asyncio.get_running_loop()
        while True:
            self._changed.clear()
            if self._pending_texts == 0:
                await self._changed.wait()
                continue
            if self._pending_texts >= self._max_texts or self._pending_tokens >= self._max_tokens:
                return
            if any(queue and queue[0].alone for queue in self._queues.values()):
                return
            urgent = min(priority for priority, queue in self._queues.items() if queue)
            now, held = loop.time(), self._held_until(urgent)
            until = held if held > now else self._oldest_arrival() + self._window_s
            if until <= now:
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(until - now):
                    await self._changed.wait()

    def _held_until(self, urgent: int) -> float:
        """Until when a partial batch whose most urgent request has priority `urgent` waits
        for company: while a call as urgent is out (calls_out.py), and while requests as
        urgent are announced (forecast.py), up to AWAIT_ROUND_TRIPS round trips after its
        oldest request arrived."""
        held = self._out.held_until(urgent)
        if self.forecast.any_near(urgent):
            awaited = self._oldest_arrival() + AWAIT_ROUND_TRIPS * self._out.expected_round_trip()
            held = max(held, awaited)
        return held

    def _oldest_arrival(self) -> float:
        return min(queue[0].enqueued for queue in self._queues.values() if queue)

    def _take_batch(self) -> list[Piece]:
        """Removes the next batch's texts from the queues, highest priority first."""
        self._drop_finished()
        # Each request in a batch brings at least one text: more requests cannot fit.
        leading = list(
            itertools.islice(
                itertools.chain.from_iterable(self._queues[p] for p in Priority), self._max_texts
            )
        )
        counts = plan_batch(
            (request.tokens[request.sent :] for request in leading),
            self._max_texts,
            self._max_tokens,
        )
        pieces: list[Piece] = []
        for request, count in zip(leading, counts, strict=False):
            if count == 0:
                break
            start, request.sent = request.sent, request.sent + count
            pieces.append((request, start, request.sent))
            self._pending_texts -= count
            self._pending_tokens -= sum(request.tokens[start : request.sent])
            if request.sent == len(request.texts):
                # Fully taken requests are a prefix of the serving order: each is a head.
                self._queues[request.priority].popleft()
        return pieces

    def _drop_finished(self) -> None:
        """Forgets queued requests that are already done: withdrawn by their caller, or
        failed because an earlier piece of theirs failed."""
        for priority, queue in self._queues.items():
            if not any(request.future.done() for request in queue):
                continue
            kept: deque[EmbeddingRequest] = deque()
            for request in queue:
                if request.future.done():
                    self._pending_texts -= len(request.texts) - request.sent
                    self._pending_tokens -= sum(request.tokens[request.sent :])
                else:
                    kept.append(request)
            self._queues[priority] = kept

    def _fail_queued(self, error: SchedulerClosedError) -> None:
        for queue in self._queues.values():
            for request in queue:
                request.fail(error)
            queue.clear()
        self._pending_texts = self._pending_tokens = 0

    async def _send(self, pieces: list[Piece], call: int) -> None:
        answered = False
        try:
            # A caller may have gone away between packing and this task's first step.
            live = [piece for piece in pieces if not piece[0].future.done()]
            answered = bool(live) and await self._call(live)
        finally:
            self._out.back(call, asyncio.get_running_loop().time(), answered)
            self._slots.release()
            self._changed.set()

    async def _call(self, pieces: list[Piece]) -> bool:
        """Whether the provider answered."""
        texts = [text for request, start, end in pieces for text in request.texts[start:end]]
        priority = Priority(min(request.priority for request, _, _ in pieces)).name.lower()
        record_embedding_batch(len(texts), priority)
        attributes = {
            "gen_ai.operation.name": "embeddings",
            "gen_ai.request.model": self.name,
            **own(texts=len(texts), requests=len(pieces), priority=priority),
        }
        # One batch may serve several queries and documents: it links to each of their spans.
        callers = [request.caller for request, _, _ in pieces]
        with linked_root_span("embedding_batch", callers, SpanKind.CLIENT, attributes):
            return await self._answer(pieces, texts)

    async def _answer(self, pieces: list[Piece], texts: list[str]) -> bool:
        try:
            matrix = await self._embedder.embed(texts)
            if matrix.shape[0] != len(texts):
                raise ProviderError(
                    f"{self.name} returned {matrix.shape[0]} vectors for {len(texts)} texts"
                )
        except asyncio.CancelledError:
            fail_pieces(pieces, SchedulerClosedError("the embedding scheduler was closed"))
            raise
        except Exception as exc:  # noqa: BLE001 - handed to every waiting caller, not swallowed
            log.warning("embedding call of %d texts failed: %s", len(texts), exc)
            fail_pieces(pieces, exc)
            return False
        offset = 0
        for request, start, end in pieces:
            request.deliver(start, matrix[offset : offset + end - start])
            offset += end - start
        return True


class PriorityView:
    """The scheduler as a plain Embedder whose requests all carry one priority."""

    def __init__(self, scheduler: EmbeddingScheduler, priority: Priority) -> None:
        self._scheduler = scheduler
        self.priority = priority

    @property
    def name(self) -> str:
        return self._scheduler.name

    @property
    def dimensions(self) -> int:
        return self._scheduler.dimensions

    @property
    def languages(self) -> frozenset[str]:
        return self._scheduler.languages

    async def embed(self, texts: Sequence[str]) -> Matrix:
        return await self._scheduler.embed(texts, priority=self.priority)

    async def close(self) -> None:
        """Does nothing: the scheduler is shared, so only its owner closes it (one stage
        shutting down must not cut the others off)."""
        return None
