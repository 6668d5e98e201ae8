"""The embedded event log beyond the bus contract (tests/contract/bus_contract.py): offsets,
wake-ups, pruning, one consumer per group, partitions shared by processes, and crash
recovery across processes."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from ragstream.common.bus.protocols import BusRecord, Consumer, OutgoingRecord
from ragstream.common.bus.sqlite_log import MIGRATIONS, SqliteEventLog
from ragstream.common.bus.sqlite_records import Membership, partition_of
from ragstream.common.storage.sqlite import Database


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    async with await Database.open(tmp_path) as database:
        yield database


@pytest.fixture
async def log(db: Database) -> SqliteEventLog:
    return await SqliteEventLog.open(db, poll_interval=0.05)


def outgoing(*keys: str) -> list[OutgoingRecord]:
    return [OutgoingRecord(key, key.encode()) for key in keys]


async def drain(consumer: Consumer, timeout: float = 0.2) -> list[BusRecord]:
    """Everything the consumer gets until a poll comes back empty."""
    found: list[BusRecord] = []
    while batch := await consumer.poll(100, timeout):
        found += batch
    return found


async def test_poll_returns_at_most_max_records_and_continues_after_them(
    log: SqliteEventLog,
) -> None:
    await log.publish("t", outgoing(*(f"k{i}" for i in range(7))))
    consumer = log.consumer("g", ["t"])
    assert [r.offset for r in await consumer.poll(3, 1.0)] == [0, 1, 2]
    assert [r.offset for r in await consumer.poll(3, 1.0)] == [3, 4, 5]
    assert [r.offset for r in await consumer.poll(3, 1.0)] == [6]
    assert consumer.positions == {("t", 0): 7}


async def test_a_local_publish_wakes_a_waiting_poll_at_once(db: Database) -> None:
    log = await SqliteEventLog.open(db, poll_interval=30.0)  # only the wake-up can be fast
    consumer = log.consumer("g", ["t"])
    started = time.monotonic()
    waiting = asyncio.create_task(consumer.poll(10, 20.0))
    await asyncio.sleep(0.1)
    await log.publish("t", outgoing("k"))
    assert [r.key for r in await waiting] == ["k"]
    assert time.monotonic() - started < 2.0


async def test_close_ends_a_waiting_poll(log: SqliteEventLog) -> None:
    consumer = log.consumer("g", ["t"])
    waiting = asyncio.create_task(consumer.poll(10, 20.0))
    await asyncio.sleep(0.1)
    await consumer.close()
    assert await asyncio.wait_for(waiting, 2.0) == []


async def test_commits_never_move_back(log: SqliteEventLog) -> None:
    await log.publish("t", outgoing("a", "b", "c"))
    consumer = log.consumer("g", ["t"])
    a, b, c = await consumer.poll(10, 1.0)
    await consumer.commit([c])
    await consumer.commit([a, b])
    assert await log.committed("g", ["t"]) == {("t", 0): 3}
    await consumer.commit([])


async def test_commit_rejects_records_of_other_topics(log: SqliteEventLog) -> None:
    consumer = log.consumer("g", ["t"])
    with pytest.raises(ValueError, match="not from this consumer's partitions"):
        await consumer.commit([BusRecord("other", 0, 0, "k", b"v")])


async def test_offsets_keep_growing_and_status_reports_them(log: SqliteEventLog) -> None:
    assert await log.end_offsets(["t"]) == {"t": 0}
    await log.publish("t", outgoing("a", "b"))
    consumer = log.consumer("g", ["t"])
    await consumer.commit(await consumer.poll(1, 1.0))
    await log.publish("t", outgoing("c"))
    assert [r.offset for r in await drain(consumer)] == [1, 2]
    assert await log.end_offsets(["t"]) == {"t": 3}
    assert await log.committed("g", ["t"]) == {("t", 0): 1}
    assert await log.lag("g", ["t"]) == {("t", 0): 2}


async def test_prune_drops_only_what_every_group_committed(log: SqliteEventLog) -> None:
    await log.publish("t", outgoing("a", "b", "c", "d"))
    assert await log.prune_consumed(["t"]) == 0  # nobody committed: keep everything
    fast, slow = log.consumer("fast", ["t"]), log.consumer("slow", ["t"])
    await fast.commit(await fast.poll(3, 1.0))
    await slow.commit(await slow.poll(1, 1.0))
    assert await log.prune_consumed(["t", "other"]) == 1
    await slow.close()
    assert [r.key for r in await drain(log.consumer("slow", ["t"]))] == ["b", "c", "d"]
    await log.publish("t", outgoing("e"))
    assert [r.offset for r in await drain(fast)] == [3, 4]


async def test_a_group_has_one_open_consumer_at_a_time(log: SqliteEventLog) -> None:
    first = log.consumer("g", ["t"])
    with pytest.raises(ValueError, match="already has an open consumer"):
        log.consumer("g", ["t"])
    await first.close()
    await log.consumer("g", ["t"]).close()


async def test_members_read_disjoint_partitions_and_each_key_in_order(db: Database) -> None:
    first = await SqliteEventLog.open(db, partitions=4, member=Membership(0, 2))
    second = await SqliteEventLog.open(db, partitions=4, member=Membership(1, 2))
    keys = [f"w/doc-{i % 9}" for i in range(40)]
    await first.publish("t", [OutgoingRecord(key, str(i).encode()) for i, key in enumerate(keys)])
    got = {m: await drain(log.consumer("g", ["t"])) for m, log in enumerate((first, second))}

    assert {r.partition for r in got[0]} <= {0, 2} and {r.partition for r in got[1]} <= {1, 3}
    assert got[0] and got[1]  # nine keys over four partitions: both members have work
    assert sorted(int(r.value or b"") for r in got[0] + got[1]) == list(range(40))
    for records in got.values():
        for partition in {r.partition for r in records}:  # offsets count within a partition
            offsets = [r.offset for r in records if r.partition == partition]
            assert offsets == list(range(len(offsets)))
        for key in {r.key for r in records}:  # a key keeps its order
            sent = [int(r.value or b"") for r in records if r.key == key]
            assert sent == sorted(sent)
        for record in records:
            assert record.partition == partition_of(record.key, 4)
    assert await first.end_offsets(["t"]) == {"t": 40}


async def test_a_members_commits_resume_each_of_its_partitions(db: Database) -> None:
    log = await SqliteEventLog.open(db, partitions=3, member=Membership(0, 1))
    await log.publish("t", outgoing(*(f"k{i}" for i in range(12))))
    consumer = log.consumer("g", ["t"])
    first = await consumer.poll(5, 1.0)
    await consumer.commit(first)
    await consumer.close()
    assert sum((await log.lag("g", ["t"])).values()) == 12 - len(first)
    rest = await drain(log.consumer("g", ["t"]))
    assert sorted(r.key for r in first + rest) == sorted(f"k{i}" for i in range(12))
    assert await log.workspace_lag("g", ["t"], "k1") == 0  # no key "k1/..."


async def test_a_log_from_before_partitions_keeps_its_records_and_offsets(db: Database) -> None:
    await db.migrate("bus", MIGRATIONS[:1])

    def old_log(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO bus_topics (topic, next_offset) VALUES ('t', 5)")
        conn.executemany(
            "INSERT INTO bus_records (topic, offset, key, value, headers, ts) "
            "VALUES ('t', ?, ?, NULL, '[]', 0)",
            [(offset, f"k{offset}") for offset in range(2, 5)],  # 0 and 1 were pruned
        )
        conn.execute("INSERT INTO bus_offsets VALUES ('g', 't', 0, 3)")

    await db.write(old_log)
    log = await SqliteEventLog.open(db, partitions=4)
    assert await log.lag("g", ["t"]) == {("t", 0): 2}
    await log.publish("t", outgoing("k5"))  # the topic keeps its one partition
    assert [(r.partition, r.offset, r.key) for r in await drain(log.consumer("g", ["t"]))] == [
        (0, 3, "k3"),
        (0, 4, "k4"),
        (0, 5, "k5"),
    ]


async def test_a_consumers_lag_names_its_partitions_before_and_after_the_first_record(
    db: Database,
) -> None:
    log = await SqliteEventLog.open(db, partitions=4, member=Membership(1, 2))
    consumer = log.consumer("g", ["t"])
    assert await consumer.lag() == {("t", 1): 0, ("t", 3): 0}  # the metric shows the topic
    await log.publish("t", outgoing(*(f"k{i}" for i in range(20))))
    lag = await consumer.lag()
    assert set(lag) == {("t", 1), ("t", 3)}
    assert sum(lag.values()) == sum(1 for i in range(20) if partition_of(f"k{i}", 4) % 2 == 1)


async def test_a_member_commits_only_its_own_partitions(db: Database) -> None:
    log = await SqliteEventLog.open(db, partitions=2, member=Membership(1, 2))
    consumer = log.consumer("g", ["t"])
    with pytest.raises(ValueError, match="not from this consumer's partitions"):
        await consumer.commit([BusRecord("t", 0, 0, "k", b"v")])


async def test_a_topic_of_one_partition_has_one_reader_and_the_other_says_so(
    db: Database, caplog: pytest.LogCaptureFixture
) -> None:
    old = await SqliteEventLog.open(db)  # a topic made before partitions: one
    await old.publish("t", outgoing("a", "b"))
    second = await SqliteEventLog.open(db, partitions=4, member=Membership(1, 2))
    await second.publish("t", outgoing("c"))  # the topic keeps its one partition
    assert await drain(second.consumer("g", ["t"])) == []
    assert "member 1 of 2 reads none of it" in caplog.text
    first = await SqliteEventLog.open(db, partitions=4, member=Membership(0, 2))
    assert [r.key for r in await drain(first.consumer("g", ["t"]))] == ["a", "b", "c"]


def test_a_membership_names_an_existing_member() -> None:
    with pytest.raises(ValueError, match="member 2 of 2 does not exist"):
        Membership(2, 2)


CHILD = textwrap.dedent(
    """
    import asyncio, sys, time
    from pathlib import Path
    from ragstream.common.bus.protocols import OutgoingRecord
    from ragstream.common.bus.sqlite_log import SqliteEventLog
    from ragstream.common.storage.sqlite import Database

    def say(*words):
        print(*words, flush=True)

    async def main(data_dir, mode):
        db = await Database.open(Path(data_dir))
        log = await SqliteEventLog.open(db, poll_interval=0.05)
        if mode == "publish-later":
            await asyncio.sleep(0.3)
            await log.publish("t", [OutgoingRecord("late", b"v")])
            say("published")
            return
        consumer = log.consumer("g", ["t"])
        done = await consumer.poll(4, 10.0)
        await consumer.commit(done)
        say("committed", *[r.offset for r in done])
        processing = await consumer.poll(3, 10.0)
        say("processed", *[r.offset for r in processing])
        await log.publish("from-child", [OutgoingRecord("c", b"v")])
        say("ready")
        time.sleep(60)  # killed here: after processing, before the commit

    asyncio.run(main(sys.argv[1], sys.argv[2]))
    """
)


def start_child(data_dir: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(data_dir), mode],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )


def read_lines_until(child: subprocess.Popen[str], last: str) -> dict[str, list[int]]:
    assert child.stdout is not None
    lines: dict[str, list[int]] = {}
    for line in child.stdout:
        word, *offsets = line.split()
        lines[word] = [int(o) for o in offsets]
        if word == last:
            return lines
    raise AssertionError(f"child exited ({child.wait()}) before printing {last!r}: {lines}")


async def test_a_killed_consumer_gets_its_uncommitted_records_again(tmp_path: Path) -> None:
    async with await Database.open(tmp_path) as db:
        log = await SqliteEventLog.open(db, poll_interval=0.05)
        await log.publish("t", outgoing(*(f"k{i}" for i in range(10))))
    child = start_child(tmp_path, "consume")
    try:
        lines = await asyncio.to_thread(read_lines_until, child, "ready")
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    assert lines["committed"] == [0, 1, 2, 3] and lines["processed"] == [4, 5, 6]

    async with await Database.open(tmp_path) as db:
        log = await SqliteEventLog.open(db, poll_interval=0.05)
        consumer = log.consumer("g", ["t"])
        assert [r.offset for r in await drain(consumer)] == [4, 5, 6, 7, 8, 9]
        assert await log.committed("g", ["t"]) == {("t", 0): 4}
        # What the child published before it died is durable.
        assert [r.key for r in await drain(log.consumer("g2", ["from-child"]))] == ["c"]


async def test_a_poll_sees_records_another_process_publishes(
    log: SqliteEventLog, db: Database
) -> None:
    consumer = log.consumer("g", ["t"])
    assert await consumer.poll(10, 0.0) == []
    child = start_child(db.path.parent, "publish-later")
    try:
        got = await consumer.poll(10, 20.0)
    finally:
        await asyncio.to_thread(child.wait)
    assert [r.key for r in got] == ["late"]
    assert child.returncode == 0


async def test_a_workspaces_lag_counts_only_its_uncommitted_keys(log: SqliteEventLog) -> None:
    keys = ["alpha/a", "beta/b", "alpha/c", "alphabet/d", "alpha/e"]
    await log.publish("t", [OutgoingRecord(key, b"v") for key in keys])
    assert await log.workspace_lag("g", ["t"], "alpha") == 3
    assert await log.workspace_lag("g", ["t"], "alphabet") == 1
    consumer = log.consumer("g", ["t"])
    first_three = await consumer.poll(3, timeout=1)
    await consumer.commit(first_three)
    assert await log.workspace_lag("g", ["t"], "alpha") == 1
    assert await log.workspace_lag("g", ["t"], "beta") == 0
    await consumer.close()
