"""How many CPU cores this process can use, for defaults that fit the machine."""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
"""cgroup v2: "<quota> <period>" in microseconds, or "max <period>" without a limit."""


def available_cores(cpu_max: Path = CGROUP_CPU_MAX) -> int:
    """The cores of the process's affinity mask, capped by its cgroup's CPU quota (a
    container's CPU limit, rounded up), and at least 1. os.cpu_count() alone would count
    every core of a Kubernetes node, whatever the pod's limit."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        quota, period = cpu_max.read_text().split()
        if quota != "max":
            cores = min(cores or 1, math.ceil(int(quota) / int(period)))
    except (OSError, ValueError):
        pass  # no cgroup v2 limit to apply
    return max(1, cores or 1)
