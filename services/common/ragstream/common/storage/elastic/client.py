"""The AsyncElasticsearch client from configuration, checked before anything uses it."""

from __future__ import annotations

from elasticsearch import ApiError, AsyncElasticsearch, TransportError

from ragstream.common.config import ElasticsearchConfig
from ragstream.common.errors import BackendUnavailableError

RETRY_ON_STATUS = (429, 502, 503, 504)
"""Busy or restarting node: retried by the transport (reads and single writes)."""


class ElasticsearchUnavailableError(BackendUnavailableError):
    """No Elasticsearch answers at the configured hosts; the message says where and why."""


def build_client(cfg: ElasticsearchConfig) -> AsyncElasticsearch:
    api_key = cfg.api_key.get_secret_value()
    basic = (cfg.username, cfg.password.get_secret_value()) if cfg.username else None
    return AsyncElasticsearch(
        cfg.hosts,
        api_key=api_key or None,
        basic_auth=basic,
        verify_certs=cfg.verify_certs,
        request_timeout=cfg.request_timeout_s,
        retry_on_status=RETRY_ON_STATUS,
        retry_on_timeout=True,
        max_retries=3,
    )


async def check_health(client: AsyncElasticsearch, hosts: list[str], wait_s: float = 30.0) -> None:
    """Waits up to `wait_s` for yellow or green health (cluster.health, not `GET /`, which
    minimal distributions lack)."""
    try:
        health = await client.cluster.health(wait_for_status="yellow", timeout=f"{int(wait_s)}s")
    except (TransportError, ApiError) as error:
        raise ElasticsearchUnavailableError(
            f"no Elasticsearch answers at {', '.join(hosts)} (elasticsearch.hosts): {error}"
        ) from error
    if health.get("timed_out") or health.get("status") not in ("yellow", "green"):
        raise ElasticsearchUnavailableError(
            f"Elasticsearch at {', '.join(hosts)} is {health.get('status')}, not yellow or green"
        )


async def connect(cfg: ElasticsearchConfig) -> AsyncElasticsearch:
    """A healthy cluster's client; closed by the caller."""
    client = build_client(cfg)
    try:
        await check_health(client, cfg.hosts)
    except BaseException:
        await client.close()
        raise
    return client
