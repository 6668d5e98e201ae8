"""Bulk writes through the client's async helper: batched, retried on 429 with backoff.

Each call is one logical write; it returns when every action is durable (the translog is
fsynced before a bulk response) or raises naming the failures. Visibility to searches is the
caller's refresh policy: no refresh per document, "wait_for" where a stage reads its own
writes through a search right after.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from elasticsearch import AsyncElasticsearch
from elasticsearch.helpers import async_streaming_bulk

RefreshPolicy = Literal["false", "wait_for", "true"]

CHUNK_ACTIONS = 500
CHUNK_BYTES = 20 * 1024 * 1024
MAX_RETRIES = 8
INITIAL_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
"""Rejections (429: the node's write queue is full) are retried up to 8 times, waiting 0.5 s,
1 s, 2 s, ... at most 30 s: about two minutes before a write fails."""
_SHOWN_ERRORS = 3


class BulkWriteError(RuntimeError):
    """Some actions of a bulk write failed for a reason other than a rejection."""

    def __init__(self, failures: list[dict[str, Any]], total: int) -> None:
        self.failures = failures
        shown = "; ".join(_describe(failure) for failure in failures[:_SHOWN_ERRORS])
        more = (
            f" (and {len(failures) - _SHOWN_ERRORS} more)" if len(failures) > _SHOWN_ERRORS else ""
        )
        super().__init__(f"{len(failures)} of {total} bulk actions failed: {shown}{more}")


def _describe(failure: dict[str, Any]) -> str:
    op, item = next(iter(failure.items()))
    error = item.get("error", {})
    reason = error.get("reason", error) if isinstance(error, dict) else error
    hint = ""
    if item.get("status") == 403 and "blocked" in str(reason):
        hint = (
            " (a write-blocked index: `ragstream reindex` rebuilt or is rebuilding it for a"
            " new embedding model; restart this process with that model)"
        )
    return f"{op} {item.get('_index')}/{item.get('_id')}: {item.get('status')} {reason}{hint}"


def _ignorable(op: str, status: int, ignore_conflicts: bool) -> bool:
    if op == "delete" and status == 404:
        return True  # deleting what is not there is the outcome asked for
    # With external versions a 409 means the index already holds this or a newer version:
    # a replay, which must not overwrite newer data.
    return status == 409 and ignore_conflicts


async def bulk_write(
    client: AsyncElasticsearch,
    actions: Iterable[dict[str, Any]],
    *,
    refresh: RefreshPolicy,
    ignore_conflicts: bool = False,
) -> int:
    """Runs the actions (helper format: `_op_type`, `_index`, `_id`, `_source`, ...);
    returns how many there were."""
    failures: list[dict[str, Any]] = []
    total = 0
    async for ok, item in async_streaming_bulk(
        client,
        actions,
        chunk_size=CHUNK_ACTIONS,
        max_chunk_bytes=CHUNK_BYTES,
        raise_on_error=False,
        max_retries=MAX_RETRIES,
        initial_backoff=INITIAL_BACKOFF_S,
        max_backoff=MAX_BACKOFF_S,
        refresh=refresh,
    ):
        total += 1
        if ok:
            continue
        op, result = next(iter(item.items()))
        if not _ignorable(op, int(result.get("status", 500)), ignore_conflicts):
            failures.append(item)
    if failures:
        raise BulkWriteError(failures, total)
    return total
