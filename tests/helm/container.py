"""The image built by scripts/image.sh, and commands run in it as the chart's pods run.

There is no container engine here: a container is buildah's working container of the image
(a fresh overlay on the image's layers), entered with util-linux `unshare` and coreutils
`chroot`, which give what the chart's securityContext asks for. `buildah run` cannot: with
the root filesystem read-only it fails to create its own mount points (/run/.containerenv)
and, given a /run of its own, loses the command's exit code in a crash while cleaning up.

Every command runs in a mount namespace of its own where the image's root filesystem is
read-only (readOnlyRootFilesystem), /tmp an empty tmpfs (the chart's emptyDir), /dev a few
device nodes, and only the given host folders are mounted besides; as the image's user (its
USER, which the chart's runAsUser must equal), with the image's environment, working
directory and PATH, plus the environment given. It shares the host's network (loopback
ports) unless `offline`, which gives it a network namespace with only loopback.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helm.chart import REPO

IMAGE_SCRIPT = REPO / "scripts" / "image.sh"
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")

# Run by the host's sh inside the new namespaces, before it becomes the image's process:
# $1 the root filesystem, $2 uid:gid, $3 the working directory, $4 "offline" or "",
# $5 the mounts as lines "source target ro|rw", then env -i's arguments.
ENTER = r"""
set -eu
root=$1 user=$2 workdir=$3 offline=$4 mounts=$5
shift 5
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=755,nosuid tmpfs "$root/dev"
for device in __DEVICES__; do
  touch "$root/dev/$device"
  mount --bind "/dev/$device" "$root/dev/$device"
done
mkdir "$root/dev/shm"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
printf '%s\n' "$mounts" | while read -r source target mode; do
  [ -n "$source" ] || continue
  mkdir -p "$root$target"
  mount --bind "$source" "$root$target"
  [ "$mode" = rw ] || mount -o remount,bind,ro "$root$target"
done
mount -o remount,bind,ro "$root"
[ -z "$offline" ] || ip link set lo up
exec chroot --userspec="$user" "$root" /usr/bin/env -i -C "$workdir" "$@"
""".replace("__DEVICES__", " ".join(DEVICES))


class ImageError(Exception):
    """scripts/image.sh or buildah failed; the message carries their output."""


def image_script(*args: str, timeout_s: float = 120) -> str:
    """scripts/image.sh ARGS; its stdout (ImageError with its stderr if it fails)."""
    done = subprocess.run(
        ["bash", str(IMAGE_SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )
    if done.returncode != 0:
        raise ImageError(f"scripts/image.sh {' '.join(args)} failed:\n{done.stderr[-8000:]}")
    return done.stdout


def buildah(*args: str) -> str:
    """buildah on the image's storage."""
    return image_script("buildah", *args)


@dataclass(frozen=True)
class Image:
    name: str
    config: Mapping[str, Any]
    """The OCI image config: User, Env, Entrypoint, WorkingDir, ExposedPorts."""

    @property
    def env(self) -> dict[str, str]:
        return dict(item.split("=", 1) for item in self.config.get("Env", []))


def build_image(timeout_s: float = 1800) -> Image:
    """The tree's image, built by scripts/image.sh unless it already was."""
    name = image_script("build", timeout_s=timeout_s).strip().splitlines()[-1]
    inspected = json.loads(buildah("inspect", "--type", "image", name))
    return Image(name, inspected["OCIv1"]["config"])


@dataclass(frozen=True)
class Mount:
    source: Path
    target: str
    writable: bool = False


@dataclass
class Container:
    """A fresh working container of `image`; use it in a `with` block, which removes it."""

    image: Image
    mounts: Sequence[Mount] = ()
    offline: bool = False
    name: str = ""
    rootfs: Path = field(default=Path("/nonexistent"))

    def __enter__(self) -> Container:
        self.name = buildah("from", "--pull=never", "--quiet", self.image.name).strip()
        self.rootfs = Path(buildah("mount", self.name).strip())
        return self

    def __exit__(self, *exc_info: object) -> None:
        buildah("rm", self.name)

    def command(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> list[str]:
        """The host command line that runs `argv` in the container."""
        environment = {**self.image.env, **(env or {})}
        mounts = "\n".join(
            f"{m.source} {m.target} {'rw' if m.writable else 'ro'}" for m in self.mounts
        )
        unshare = ["unshare", "--mount", "--propagation", "private", "--fork"]
        if self.offline:
            unshare.append("--net")
        return [
            *unshare,
            "sh", "-c", ENTER, "enter", str(self.rootfs), self.image.config["User"],
            self.image.config.get("WorkingDir") or "/", "offline" if self.offline else "",
            mounts, *(f"{k}={v}" for k, v in environment.items()), *argv,
        ]  # fmt: skip

    def run(
        self, argv: Sequence[str], env: Mapping[str, str] | None = None, timeout_s: float = 300
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(argv, env),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )

    def start(self, argv: Sequence[str], log_path: Path, env: Mapping[str, str]) -> Process:
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                self.command(argv, env),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, signalled as the kubelet does
            )
        return Process(process, log_path, time.monotonic())


@dataclass
class Process:
    """A long-running command in a container; `started` is the monotonic time of its start."""

    popen: subprocess.Popen[bytes]
    log_path: Path
    started: float

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def terminate(self, grace_s: float) -> tuple[int, float]:
        """SIGTERM, as the kubelet sends it; the exit code and the seconds it took. After
        `grace_s` the process is killed (SIGKILL), as the kubelet does, and TimeoutExpired
        is raised."""
        began = time.monotonic()
        os.killpg(self.popen.pid, signal.SIGTERM)
        try:
            code = self.popen.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        return code, time.monotonic() - began

    def kill(self) -> None:
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(timeout=30)
