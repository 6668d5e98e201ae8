"""The malloc arena cap: set on glibc at the CLI's start, never over the user's own
MALLOC_ARENA_MAX."""

import platform
import subprocess
import sys

import pytest

from ragstream.common.arenas import limit_malloc_arenas


def test_the_cap_is_set_on_glibc_only() -> None:
    on_glibc = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"
    assert limit_malloc_arenas() is on_glibc


def test_the_users_own_setting_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert limit_malloc_arenas() is False


def test_every_command_sets_it_before_running() -> None:
    probe = (
        "calls = []\n"
        "import ragstream.cli.main as main\n"
        "main.limit_malloc_arenas = lambda: calls.append(1) or True\n"
        "import sys\n"
        "sys.argv = ['ragstream', 'status', '--help']\n"
        "try:\n"
        "    main.app()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(len(calls))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "1"
