"""The statement runner (threads, retries, errors) and the nebula3 connector's error paths."""

from __future__ import annotations

import asyncio
import re
import threading
import time

import pytest
from nebula3.common.ttypes import ErrorCode
from nebula3.data.ResultSet import ResultSet
from nebula3.graph.ttypes import ExecutionResponse

from ragstream.common.config import ConfigError, NebulaConfig
from ragstream.common.storage.nebula.executor import (
    Nebula3Connector,
    NebulaUnavailableError,
    Runner,
    StatementError,
    is_transient,
    parse_addresses,
)
from tests.support.nebula_double import NebulaDouble

SPACE_SETUP = "CREATE SPACE IF NOT EXISTS sp(vid_type = FIXED_STRING(32))"


@pytest.fixture
def double() -> NebulaDouble:
    return NebulaDouble()


async def test_transient_errors_are_retried_until_the_statement_succeeds(
    double: NebulaDouble,
) -> None:
    runner = Runner(double.connector().open_session(), threads=1, retries=3, backoff_s=0.0)
    double.inject(ErrorCode.E_LEADER_CHANGED, "leader changed", times=2)
    double.disconnect(times=1)
    result = await runner.run(SPACE_SETUP)
    assert result.is_succeeded()
    assert double.statements == [SPACE_SETUP] * 4
    await runner.close()


async def test_retries_give_up_with_the_last_error(double: NebulaDouble) -> None:
    runner = Runner(double.connector().open_session(), threads=1, retries=2, backoff_s=0.0)
    double.inject(ErrorCode.E_EXECUTION_ERROR, "Storage Error: RPC failure", times=3)
    with pytest.raises(StatementError, match=r"RPC failure.*statement: CREATE SPACE") as caught:
        await runner.run(SPACE_SETUP)
    assert caught.value.code == ErrorCode.E_EXECUTION_ERROR
    assert len(double.statements) == 3
    double.disconnect(times=3)
    with pytest.raises(StatementError, match="connection reset"):
        await runner.run(SPACE_SETUP)
    await runner.close()


async def test_other_errors_are_not_retried(double: NebulaDouble) -> None:
    runner = Runner(double.connector().open_session(), threads=1, retries=3, backoff_s=0.0)
    with pytest.raises(StatementError, match=f"error {ErrorCode.E_SYNTAX_ERROR}"):
        await runner.run("CREATE SPACES")
    assert len(double.statements) == 1
    unchecked = await runner.run("USE missing", check=False)
    assert not unchecked.is_succeeded()
    await runner.close()


class _SlowClient:
    """Counts how many statements run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.most = 0
        self.closed = False
        self._lock = threading.Lock()

    def execute(self, stmt: str) -> ResultSet:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        time.sleep(0.02)
        with self._lock:
            self.running -= 1
        return ResultSet(ExecutionResponse(ErrorCode.SUCCEEDED, 1), all_latency=1)

    def close(self) -> None:
        self.closed = True


async def test_statements_in_flight_are_bounded_by_the_thread_count() -> None:
    client = _SlowClient()
    runner = Runner(client, threads=3)
    await asyncio.gather(*(runner.run("RETURN 1") for _ in range(12)))
    assert client.most == 3
    await runner.close()
    assert client.closed


def test_transient_classification() -> None:
    assert is_transient(ErrorCode.E_SESSION_TIMEOUT, "")
    assert is_transient(ErrorCode.E_EXECUTION_ERROR, "Storage Error: The leader has changed")
    assert not is_transient(ErrorCode.E_EXECUTION_ERROR, "SpaceNotFound: SpaceName `x`")
    assert not is_transient(ErrorCode.E_SYNTAX_ERROR, "timeout")


def test_addresses_are_parsed_or_rejected_clearly() -> None:
    assert parse_addresses("graphd-0:9669, 10.0.0.2:9670") == [
        ("graphd-0", 9669),
        ("10.0.0.2", 9670),
    ]
    for bad in ("graphd", "graphd:", ":9669", "a:1,", "a:99999", "a:x"):
        with pytest.raises(ConfigError, match=r"nebula\.addrs"):
            parse_addresses(bad)


def test_an_unreachable_cluster_is_a_clear_error() -> None:
    connector = Nebula3Connector(NebulaConfig(addrs="127.0.0.1:1", timeout_ms=500))
    with pytest.raises(NebulaUnavailableError, match=re.escape("127.0.0.1:1 as user 'root'")):
        connector.open_session()
    with pytest.raises(NebulaUnavailableError, match=re.escape("127.0.0.1:1")):
        connector.open_pool("ragstream")
