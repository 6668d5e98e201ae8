"""Runs nGQL statements from asyncio: nebula3's blocking clients behind a bounded thread pool.

nebula3-python is synchronous. Every statement runs on one of `threads` worker threads, and
`threads` equals the session pool's size, so the pool never runs out of sessions and at
most that many statements are in flight. Statements that fail for a transient reason (a
lost connection, a leader change, an expired session) are retried with backoff: every
statement the graph store sends is idempotent (INSERT overwrites, DELETE of a missing
element is a no-op, reads have no effect), so running one twice is harmless.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

from nebula3.common.ttypes import ErrorCode
from nebula3.Config import Config, SessionPoolConfig
from nebula3.data.ResultSet import ResultSet
from nebula3.Exception import (
    AuthFailedException,
    InValidHostname,
    IOErrorException,
    NotValidConnectionException,
)
from nebula3.gclient.net.ConnectionPool import ConnectionPool
from nebula3.gclient.net.SessionPool import SessionPool

from ragstream.common.config import ConfigError, NebulaConfig
from ragstream.common.errors import BackendUnavailableError

log = logging.getLogger(__name__)
T = TypeVar("T")

TRANSIENT_CODES = frozenset(
    {
        ErrorCode.E_DISCONNECTED,
        ErrorCode.E_FAIL_TO_CONNECT,
        ErrorCode.E_RPC_FAILURE,
        ErrorCode.E_LEADER_CHANGED,
        ErrorCode.E_SESSION_INVALID,
        ErrorCode.E_SESSION_TIMEOUT,
        ErrorCode.E_TOO_MANY_CONNECTIONS,
        ErrorCode.E_PARTIAL_SUCCEEDED,
        ErrorCode.E_PARTIAL_RESULT,
        ErrorCode.E_WRITE_STALLED,
        ErrorCode.E_CONSENSUS_ERROR,
        ErrorCode.E_LEADER_LEASE_FAILED,
        ErrorCode.E_RAFT_BUFFER_OVERFLOW,
        ErrorCode.E_RAFT_NOT_READY,
        ErrorCode.E_RAFT_RPC_EXCEPTION,
        ErrorCode.E_RAFT_TERM_OUT_OF_DATE,
        ErrorCode.E_RAFT_TOO_MANY_REQUESTS,
        ErrorCode.E_RAFT_WRITE_BLOCKED,
    }
)
"""Codes a retry can cure."""

TRANSIENT_STORAGE_MESSAGES = ("rpc failure", "leader", "timeout", "timed out", "not ready")
"""graphd reports storage failures as E_EXECUTION_ERROR with the cause in the message."""

CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    IOErrorException,
    NotValidConnectionException,
    OSError,
)
"""Exceptions nebula3 raises when a connection breaks mid-statement."""

OPEN_ERRORS: tuple[type[BaseException], ...] = (
    *CONNECTION_ERRORS,
    AuthFailedException,
    InValidHostname,
    RuntimeError,  # nebula3's pools raise it for "no server reachable" and "USE failed"
)
"""Exceptions nebula3 raises when a pool or session cannot be opened."""


class StatementError(RuntimeError):
    """NebulaGraph rejected a statement (or kept failing it); the message says why."""

    def __init__(self, code: int, message: str, statement: str) -> None:
        shown = statement if len(statement) <= 300 else statement[:300] + "..."
        super().__init__(f"NebulaGraph error {code}: {message}; statement: {shown}")
        self.code = code


class NebulaUnavailableError(BackendUnavailableError):
    """No connection or session could be opened; the message names the addresses."""


def is_transient(code: int, message: str) -> bool:
    if code in TRANSIENT_CODES:
        return True
    lowered = message.lower()
    return code == ErrorCode.E_EXECUTION_ERROR and any(
        hint in lowered for hint in TRANSIENT_STORAGE_MESSAGES
    )


def parse_addresses(addrs: str) -> list[tuple[str, int]]:
    """'host:port,host:port' -> [(host, port), ...]; a malformed entry is a ConfigError."""
    result = []
    for item in (part.strip() for part in addrs.split(",")):
        host, sep, port = item.rpartition(":")
        if not item or not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ConfigError(
                f"nebula.addrs ({addrs!r}): {item!r} is not host:port "
                "(expected e.g. 'graphd-0:9669,graphd-1:9669')"
            )
        result.append((host, int(port)))
    return result


class NebulaClient(Protocol):
    """What nebula3's Session and SessionPool both offer (and the test double)."""

    def execute(self, stmt: str) -> ResultSet: ...

    def close(self) -> None: ...


class Connector(Protocol):
    def open_session(self) -> NebulaClient:
        """One session bound to no space (to create the space)."""
        ...

    def open_pool(self, space: str) -> NebulaClient:
        """A session pool whose sessions are bound to `space`."""
        ...


class _Session:
    """A session of its own connection pool; close() releases both."""

    def __init__(self, pool: ConnectionPool, user: str, password: str) -> None:
        self._pool = pool
        self._session = pool.get_session(user, password)

    def execute(self, stmt: str) -> ResultSet:
        result: ResultSet = self._session.execute(stmt)
        return result

    def close(self) -> None:
        self._session.release()
        self._pool.close()


class Nebula3Connector:
    """Opens real nebula3-python clients with the settings of `NebulaConfig`."""

    def __init__(self, cfg: NebulaConfig) -> None:
        self._cfg = cfg
        self._addresses = parse_addresses(cfg.addrs)

    def _opened(self, open_client: Callable[[], T]) -> T:
        try:
            return open_client()
        except OPEN_ERRORS as exc:
            raise NebulaUnavailableError(
                f"cannot open a NebulaGraph session at {self._cfg.addrs} as user "
                f"{self._cfg.user!r}: {exc}"
            ) from exc

    def open_session(self) -> NebulaClient:
        config = Config()
        config.timeout = self._cfg.timeout_ms
        config.max_connection_pool_size = 1

        def open_client() -> _Session:
            pool = ConnectionPool()
            pool.init(self._addresses, config)
            return _Session(pool, self._cfg.user, self._cfg.password.get_secret_value())

        return self._opened(open_client)

    def open_pool(self, space: str) -> NebulaClient:
        config = SessionPoolConfig()
        config.timeout = self._cfg.timeout_ms
        config.max_size = self._cfg.pool_size
        config.min_size = 1

        def open_client() -> NebulaClient:
            pool = SessionPool(
                self._cfg.user, self._cfg.password.get_secret_value(), space, self._addresses
            )
            if not pool.init(config):
                raise RuntimeError("the session pool rejected its configuration")
            client: NebulaClient = pool
            return client

        return self._opened(open_client)


class Runner:
    """Runs statements on `client` from asyncio, `threads` at a time, retrying transients."""

    def __init__(
        self,
        client: NebulaClient,
        *,
        threads: int,
        retries: int = 3,
        backoff_s: float = 0.2,
    ) -> None:
        self._client = client
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="ragstream-nebula")
        self._retries = retries
        self._backoff_s = backoff_s

    async def run(self, statement: str, *, check: bool = True) -> ResultSet:
        """The statement's result; a failure raises StatementError unless `check` is False
        (then only connection failures that outlast the retries raise)."""
        loop = asyncio.get_running_loop()
        for attempt in range(self._retries + 1):
            last = attempt == self._retries
            try:
                result = await loop.run_in_executor(self._pool, self._client.execute, statement)
            except CONNECTION_ERRORS as exc:
                if last:
                    raise StatementError(ErrorCode.E_DISCONNECTED, str(exc), statement) from exc
                log.warning("nebula connection failed (%s); retrying", exc)
            else:
                if result.is_succeeded() or not check:
                    return result
                code, message = result.error_code(), result.error_msg()
                if last or not is_transient(code, message):
                    raise StatementError(code, message, statement)
                log.warning("nebula error %s (%s); retrying", code, message)
            await asyncio.sleep(self._backoff_s * 2**attempt)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def close(self) -> None:
        """Waits for running statements, then closes the client."""
        await asyncio.to_thread(self._pool.shutdown, wait=True)
        await asyncio.to_thread(self._client.close)
