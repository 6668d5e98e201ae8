"""The stop signal of a long-lived process."""

from __future__ import annotations

import asyncio
import signal


def stop_on_signals() -> asyncio.Event:
    """An event set by SIGINT or SIGTERM (call inside the running loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
