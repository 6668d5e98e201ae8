"""Fewer malloc arenas: the resident memory of a process whose threads allocate.

glibc gives a thread that meets contention on the heap an arena of its own, up to eight per
core, and memory freed in one arena serves only that arena's later requests. The store's
reader threads, the embedding runs and the event loop each allocate and free in turn, so a
busy process keeps hundreds of MB resident that no object holds: on the 1M-chunk store
(tests/bench/bench_search_stores.py), 1,984 MB after 200 queries with glibc's default
against 1,690 MB with two arenas. The CLI sets the limit once at start, before any thread
exists; a MALLOC_ARENA_MAX environment variable wins, and other C libraries are left as
they are.
"""

from __future__ import annotations

import ctypes
import os
import sys

ARENAS = 2
M_ARENA_MAX = -8
"""mallopt's parameter number for the arena limit (glibc's malloc.h)."""


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Caps glibc's malloc arenas at `arenas`; whether the cap was set (not on other
    platforms or C libraries, nor when MALLOC_ARENA_MAX is set: glibc reads that itself)."""
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return False  # not glibc (musl names its library otherwise)
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))
