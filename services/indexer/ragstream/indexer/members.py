"""The embedded deployment's other indexer processes (`indexer.processes`).

On the embedded bus a topic's partitions are shared by static membership
(common/bus/sqlite_log.py): the process that runs the stages is member 0, and it starts
members 1 to n - 1, each `python -m ragstream.indexer.members` running both stages and the
community step on its own partitions, on the same data directory. The stages need nothing
more: a document's events and a graph key's merges each land in one partition, so each has
one writer, and what the stages derive is a function of the stores' state, not of which
process merged which key (docs/architecture.md, "Indexing").

A member reads its settings (pickled, with its `bus.member`) from its stdin and stops when
that pipe closes: when member 0 stops it (the member finishes its batch and commits), or
when member 0 dies, so no member outlives it. A member that exits on its own is started
again after a pause that doubles up to `RESTART_MAX_S` (what it had not committed is
delivered again), and the exit is logged as an error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import pickle
import sys
import threading

from ragstream.common.config import Settings

log = logging.getLogger(__name__)

RESTART_MIN_S = 1.0
RESTART_MAX_S = 30.0
STOP_GRACE_S = 60.0
"""How long a stopping member may take to finish its batch before it is killed."""
READY = b"ready\n"
"""What a member prints on its stdout once its stages consume."""


def started_here(settings: Settings) -> bool:
    """Whether this process starts other indexer processes: member 0 of several, on the
    embedded bus."""
    return (
        settings.bus.backend == "sqlite"
        and settings.indexer.processes > 1
        and settings.bus.member == 0
    )


async def run_members(settings: Settings, stop: asyncio.Event, ready: asyncio.Event) -> None:
    """Members 1 to `indexer.processes` - 1 until `stop`; `ready` is set once each
    consumes."""
    started = [asyncio.Event() for _ in range(1, settings.indexer.processes)]
    async with asyncio.TaskGroup() as group:
        for member, member_ready in enumerate(started, start=1):
            bus = settings.bus.model_copy(update={"member": member})
            group.create_task(
                _supervise(settings.model_copy(update={"bus": bus}), stop, member_ready)
            )
        for member_ready in started:
            if await first_set(member_ready, stop) is stop:
                return
        ready.set()


async def first_set(*events: asyncio.Event) -> asyncio.Event:
    """The first of `events` to be set (the first given, if several already are)."""
    waits = {asyncio.ensure_future(event.wait()): event for event in events}
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()
    return next(event for event in events if event.is_set())


async def _supervise(settings: Settings, stop: asyncio.Event, ready: asyncio.Event) -> None:
    pause = RESTART_MIN_S
    member, count = settings.bus.member, settings.indexer.processes
    while not stop.is_set():
        code = await _run_once(settings, stop, ready)
        if stop.is_set():
            return
        log.error(
            "indexer process %d of %d exited with code %s; starting it again in %.0f s",
            member,
            count,
            code,
            pause,
        )
        await _sleep_unless(stop, pause)
        pause = min(RESTART_MAX_S, pause * 2)


async def _sleep_unless(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


async def _run_once(settings: Settings, stop: asyncio.Event, ready: asyncio.Event) -> int:
    """Runs the member until it exits or `stop`; returns its exit code."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        __name__,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(pickle.dumps(settings))
    reading = asyncio.create_task(_await_ready(child.stdout, ready))
    stopping = asyncio.create_task(stop.wait())
    exited = asyncio.create_task(child.wait())
    try:
        await asyncio.wait({stopping, exited}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopping.cancel()
        if not exited.done():
            await _stop(child, exited, settings.bus.member)
        reading.cancel()
    return exited.result()


async def _stop(child: asyncio.subprocess.Process, exited: asyncio.Task[int], member: int) -> None:
    """Closes the member's stdin (it finishes its batch, commits and exits); kills it after
    `STOP_GRACE_S`, or at once if this wait is cancelled."""
    assert child.stdin is not None
    child.stdin.close()
    try:
        await asyncio.wait_for(asyncio.shield(exited), STOP_GRACE_S)
    except TimeoutError:
        log.error("indexer process %d did not stop within %.0f s; killing it", member, STOP_GRACE_S)
        child.kill()
        await exited
    except BaseException:
        child.kill()
        raise


async def _await_ready(stdout: asyncio.StreamReader, ready: asyncio.Event) -> None:
    while line := await stdout.readline():
        if line == READY:
            ready.set()


async def _serve_member(settings: Settings) -> None:
    """One member's stages until its stdin closes (or SIGINT/SIGTERM)."""
    from ragstream.common.registry import open_backends
    from ragstream.common.signals import stop_on_signals
    from ragstream.common.telemetry import telemetry_session
    from ragstream.indexer.main import run_stages

    stop = stop_on_signals()
    loop = asyncio.get_running_loop()
    # Blocking read on a daemon thread: returns at EOF, when member 0 closes the pipe or dies.
    threading.Thread(
        target=lambda: (sys.stdin.buffer.read(), loop.call_soon_threadsafe(stop.set)),
        name="ragstream-member-stdin",
        daemon=True,
    ).start()
    ready = asyncio.Event()
    telemetry = telemetry_session("ragstream-indexer", settings.bus.backend)
    async with telemetry, open_backends(settings) as backends:
        stages = asyncio.create_task(run_stages(settings, backends, stop, ready))
        waiting = asyncio.create_task(ready.wait())
        await asyncio.wait({stages, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if ready.is_set():
            sys.stdout.buffer.write(READY)
            sys.stdout.buffer.flush()
        waiting.cancel()
        await stages


def main() -> None:
    settings = pickle.load(sys.stdin.buffer)
    if not isinstance(settings, Settings):
        raise SystemExit("ragstream.indexer.members reads its settings from its parent")
    logging.basicConfig(
        level=settings.log_level,
        format=f"%(asctime)s %(levelname)s [member {settings.bus.member}] %(name)s: %(message)s",
    )
    asyncio.run(_serve_member(settings))


if __name__ == "__main__":
    main()
