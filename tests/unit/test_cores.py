"""The core count that sizes the server's defaults: affinity, capped by a cgroup quota."""

import os
from pathlib import Path

import pytest

from ragstream.common.cores import available_cores

AFFINITY = len(os.sched_getaffinity(0))


@pytest.mark.parametrize(
    ("cpu_max", "expected"),
    [
        (None, AFFINITY),  # no cgroup v2 file
        ("max 100000", AFFINITY),  # no limit
        ("50000 100000", 1),  # half a core rounds up to one
        ("150000 100000", min(AFFINITY, 2)),
        (f"{(AFFINITY + 8) * 100000} 100000", AFFINITY),  # a quota above the mask
        ("garbage", AFFINITY),
    ],
)
def test_cores_follow_the_affinity_mask_and_the_cgroup_quota(
    tmp_path: Path, cpu_max: str | None, expected: int
) -> None:
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max + "\n")
    assert available_cores(path) == expected
