"""`scripts/kafka.sh start|stop|status`: a detached broker, configured like the tests' own,
whose pid and address live in a state directory (`python -m tests.support.kafka_cli`)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from tests.support.kafka import KafkaBroker, KafkaStartError


def _running_pid(state_dir: Path) -> tuple[int, str] | None:
    """(pid, bootstrap) of the broker recorded in state_dir if that process is still it."""
    try:
        record = json.loads((state_dir / "broker.json").read_text())
        cmdline = Path(f"/proc/{record['pid']}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return None
    if b"kafka.Kafka" not in cmdline:
        return None
    return int(record["pid"]), str(record["bootstrap"])


def _alive(pid: int) -> bool:
    """False once the process has exited, also while it waits (as a zombie) to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _cli_start(state_dir: Path, libs: Path | None) -> int:
    running = _running_pid(state_dir)
    if running is None:
        shutil.rmtree(state_dir / "broker", ignore_errors=True)
        broker = KafkaBroker(libs=libs, workdir=state_dir / "broker", detach=True)
        broker.start()
        record = {"pid": broker.pid, "bootstrap": broker.bootstrap, "log": str(broker.log_file)}
        (state_dir / "broker.json").write_text(json.dumps(record))
        print(
            f"kafka: up in {broker.startup_seconds:.1f} s; log: {broker.log_file}", file=sys.stderr
        )
        running = (broker.pid, broker.bootstrap)
    print(f"RAGSTREAM_KAFKA_BOOTSTRAP={running[1]}")
    return 0


def _cli_stop(state_dir: Path, grace: float = 15.0) -> int:
    running = _running_pid(state_dir)
    if running is not None:
        pid = running[0]
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
        print(f"kafka: stopped pid {pid}", file=sys.stderr)
    (state_dir / "broker.json").unlink(missing_ok=True)
    return 0


def _cli_status(state_dir: Path) -> int:
    running = _running_pid(state_dir)
    if running is None:
        print("kafka: not running")
        return 3
    print(f"RAGSTREAM_KAFKA_BOOTSTRAP={running[1]} (pid {running[0]})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafka.sh", description=__doc__)
    parser.add_argument("command", choices=["start", "stop", "status"])
    parser.add_argument("--state-dir", type=Path, required=True)
    parser.add_argument("--libs", type=Path, help="the fetched jars (default: fetch them)")
    args = parser.parse_args(argv)
    args.state_dir.mkdir(parents=True, exist_ok=True)
    try:
        if args.command == "start":
            return _cli_start(args.state_dir, args.libs)
        if args.command == "stop":
            return _cli_stop(args.state_dir)
        return _cli_status(args.state_dir)
    except KafkaStartError as error:
        print(f"kafka: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
